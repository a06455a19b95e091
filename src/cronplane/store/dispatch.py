"""The SQL of dispatch: the due-row scan and the fire transaction, batched.

One call of :func:`fire_batch` is one transaction holding up to `limit`
fires. Its steps, in order (each followed by a crash point, see
:func:`crash_point`)::

    fence     UPDATE leases … WHERE holder, term current and unexpired  → else Fenced, roll back
    select    due rows by ix_schedules_due (enabled AND next_run <= now),
              locked (FOR UPDATE SKIP LOCKED on PostgreSQL; BEGIN IMMEDIATE on SQLite)
    lookup    the rows' jobs (status, options) and which schedules have an item active
    decide    core.firing.decide per row (pure)
    insert    queue items, one statement        (UNIQUE(schedule_id, scheduled_for))
    update    schedules: last_run/next_run, compare-and-set on the next_run read
    events    the occurrence ledger, one statement
    commit

Reading the due rows inside the fire transaction *is* the re-read SPEC §6
asks for: a row disabled, removed or rescheduled since the last look is simply
not selected. Nothing is written outside this transaction, so a crash at any
point leaves either all of a batch or none of it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, String, Text, cast, func, select, type_coerce

from cronplane import events as ev
from cronplane.core.firing import Decision, DueRow, NextAfter, Outcome, decide
from cronplane.store import bulk, lease
from cronplane.store.queue import DEFAULT_EXPIRY, DEFAULT_PRIORITY, new_item_id
from cronplane.store.tables import events, jobs, queue_items, schedules

CRASH_ENV = "CRONPLANE_CRASH_AT"
CRASH_POINTS = (
    "after_fence",
    "after_select",
    "after_insert",
    "after_update",
    "after_events",
    "after_commit",
)
ACTOR = "dispatcher"
SQLITE_CACHE_KIB = 64 * 1024

_DUE_COLUMNS = (
    # id and next_run come back as the driver gives them (no per-row type
    # processing): hex text and timestamp text on SQLite, UUID and datetime on
    # PostgreSQL. They are written back unchanged (bulk passes both through).
    type_coerce(schedules.c.id, String).label("id"),
    schedules.c.tenant,
    schedules.c.stack,
    schedules.c.environment,
    schedules.c.name,
    schedules.c.job,
    schedules.c.cron,
    schedules.c.timezone,
    # The payload is copied into the item as stored: no decode/encode per fire.
    cast(schedules.c.payload, Text).label("payload_text"),
    schedules.c.misfire_grace,
    schedules.c.overlap,
    type_coerce(schedules.c.next_run, String).label("next_run"),
)

_LEDGER = {
    Outcome.FIRE: (ev.SCHEDULE_FIRED, "fired"),
    Outcome.SKIPPED_OVERLAP: (ev.SKIPPED_OVERLAP, "skipped: previous item still queued or running"),
    Outcome.SKIPPED_MISFIRE: (ev.SKIPPED_MISFIRE, "skipped: later than misfire_grace"),
    Outcome.JOB_MISSING: (ev.JOB_MISSING, "not fired: job missing or inactive"),
    Outcome.CALC_FAILED: (ev.NEXT_RUN_FAILED, "next run cannot be computed; schedule disabled"),
}


def crash_point(name: str) -> None:
    """Die here (SIGKILL, no cleanup) when CRONPLANE_CRASH_AT names this point.

    Only for the crash tests: the variable is read at each point so a test can
    aim a subprocess at one step of the fire transaction.
    """
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class Fencing:
    """Who we are as leader: checked at the start of every fire transaction."""

    lease_name: str
    holder: str
    term: int


@dataclass(slots=True)
class BatchResult:
    """What one fire transaction did (counts per outcome, fired occurrences)."""

    selected: int = 0
    counts: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))
    fired_for: list[datetime] = field(default_factory=list)


def earliest_next_run(conn: Connection) -> datetime | None:
    """The earliest next_run of an enabled schedule (an index lookup)."""
    value: datetime | None = conn.execute(
        select(func.min(schedules.c.next_run)).where(schedules.c.enabled)
    ).scalar()
    return value


def due_query(now: datetime, limit: int, *, lock: bool) -> Any:
    """Enabled rows with next_run <= now, earliest first: a range scan of ix_schedules_due."""
    query = (
        select(*_DUE_COLUMNS)
        # `enabled` renders as `enabled = 1` on SQLite, matching the partial index.
        .where(schedules.c.enabled, schedules.c.next_run <= now)
        .order_by(schedules.c.next_run)
        .limit(limit)
    )
    # A row being edited is skipped, not waited for: the next tick sees it.
    return query.with_for_update(skip_locked=True) if lock else query


def _active(conn: Connection, ids: Sequence[Any]) -> set[Any]:
    """Of the (raw) schedule ids, those with an item queued or running: the overlap rule."""
    if not ids:
        return set()
    status = "status IN ('queued', 'running')"
    if conn.dialect.name == "postgresql":
        sql = (
            f"SELECT DISTINCT schedule_id FROM queue_items WHERE {status} AND schedule_id = ANY(%s)"
        )
        return {row[0] for row in conn.exec_driver_sql(sql, (list(ids),))}
    found: set[Any] = set()
    # Chunks stay under SQLite's bound-parameter limit.
    for start in range(0, len(ids), 10_000):
        chunk = ids[start : start + 10_000]
        sql = (
            f"SELECT DISTINCT schedule_id FROM queue_items WHERE {status} "
            f"AND schedule_id IN ({', '.join('?' * len(chunk))})"
        )
        found.update(row[0] for row in conn.exec_driver_sql(sql, tuple(chunk)))
    return found


def _job_options(conn: Connection, rows: Sequence[Any]) -> dict[tuple[str, str, str], Any]:
    """Active jobs of the rows, keyed (tenant, stack, name) → options."""
    tenants = {row.tenant for row in rows}
    names = {row.job for row in rows}
    found = conn.execute(
        select(jobs.c.tenant, jobs.c.stack, jobs.c.name, jobs.c.options).where(
            jobs.c.tenant.in_(tenants), jobs.c.name.in_(names), jobs.c.status == "active"
        )
    )
    return {(j.tenant, j.stack, j.name): j.options or {} for j in found}


# Schedule row changes, each a compare-and-set on the next_run the batch read.
_FIRED = (("last_run", "next_run"), ("id", "next_run"), "")
_ADVANCED = (("next_run",), ("id", "next_run"), "")
_DISABLED = (
    ("next_run", "updated_at"),
    ("id", "next_run"),
    # Disabling is a definition change (unlike a fire), so it bumps the revision.
    "enabled = false, revision = revision + 1",
)


# The columns a fire writes; the others keep their NULL defaults.
ITEM_COLUMNS = (
    "id", "tenant", "stack", "environment", "job", "payload", "source", "schedule_id",
    "scheduled_for", "priority", "status", "available_at", "expires_at", "attempts",
    "max_attempts", "created_at", "updated_at",
)  # fmt: skip
EVENT_COLUMNS = (
    "code", "tenant", "stack", "environment", "schedule_id", "schedule_name", "item_id",
    "actor", "message", "scheduled_for", "fired_at", "created_at", "detail",
)  # fmt: skip


def fire_batch(
    conn: Connection,
    *,
    fencing: Fencing,
    now: datetime,
    limit: int,
    occurrences: Callable[[str, str], NextAfter],
) -> BatchResult:
    """Fire up to `limit` due rows inside the caller's transaction (see module docstring).

    Raises lease.Fenced (the caller's transaction must roll back) when our term
    is no longer current.
    """
    lease.fence(conn, fencing.lease_name, fencing.holder, fencing.term, now)
    crash_point("after_fence")
    is_pg = conn.dialect.name == "postgresql"
    if not is_pg:
        # Items and events are keyed by random UUIDs: their index inserts land
        # on random pages, and SQLite's default 2 MB page cache turns a large
        # batch into page churn. A bigger cache for this connection only.
        conn.exec_driver_sql(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    rows = conn.execute(due_query(now, limit, lock=is_pg)).all()
    crash_point("after_select")
    result = BatchResult(selected=len(rows))
    if not rows:
        return result
    options = _job_options(conn, rows)
    active = _active(conn, [row.id for row in rows if row.overlap == "skip"])
    rows_out = _Rows(conn.dialect.name, now, fencing.term)
    next_after = _Occurrences(occurrences)
    for row in rows:
        due = rows_out.instant(row.next_run)
        job_options = options.get((row.tenant, row.stack, row.job))
        decision = decide(
            DueRow(due, row.misfire_grace, row.overlap),
            now=now,
            next_after=next_after.of(row.cron, row.timezone),
            job_active=job_options is not None,
            previous_active=row.id in active,
        )
        result.counts[decision.outcome] += 1
        if decision.enqueues:
            assert job_options is not None
            rows_out.fire(row, due, decision, job_options)
            result.fired_for.append(decision.scheduled_for)
        else:
            rows_out.skip(row, due, decision)

    bulk.insert_tuples(conn, queue_items, ITEM_COLUMNS, rows_out.items)
    crash_point("after_insert")
    for (set_columns, where_columns, extra), params in (
        (_FIRED, rows_out.fired),
        (_ADVANCED, rows_out.advanced),
        (_DISABLED, rows_out.disabled),
    ):
        matched = bulk.update(conn, schedules, set_columns, where_columns, params, extra_set=extra)
        # The rows are locked (or the whole database is), so the compare-and-set
        # cannot miss; if it ever did, roll the whole batch back.
        if matched != len(params):
            raise RuntimeError("schedule rows changed under a fire transaction")
    crash_point("after_update")
    bulk.insert_tuples(conn, events, EVENT_COLUMNS, rows_out.ledger)
    crash_point("after_events")
    return result


class _Occurrences:
    """Occurrence functions for one batch, memoized on (cron, zone, instant).

    Rows due at one instant often share an expression (`*/15 * * * *`), so a
    batch computes each distinct next occurrence once. A cron or zone that
    fails to load fails each of its rows' calls (the row is then disabled).
    """

    def __init__(self, occurrences: Callable[[str, str], NextAfter]) -> None:
        self._occurrences = occurrences
        self._functions: dict[tuple[str, str], NextAfter] = {}
        self._memo: dict[tuple[str, str, datetime], datetime | None] = {}

    def of(self, cron: str, timezone: str) -> NextAfter:
        key = (cron, timezone)
        function = self._functions.get(key)
        if function is None:
            function = self._functions[key] = self._load(cron, timezone)
        memo = self._memo

        def next_after(after: datetime) -> datetime | None:
            memo_key = (cron, timezone, after)
            if memo_key not in memo:
                memo[memo_key] = function(after)
            return memo[memo_key]

        return next_after

    def _load(self, cron: str, timezone: str) -> NextAfter:
        try:
            return self._occurrences(cron, timezone)
        except Exception as error:  # a bad stored row must not stop the loop (SPEC §6)
            message = f"{type(error).__name__}: {error}"

            def failing(_after: datetime) -> datetime | None:
                raise ValueError(message)

            return failing


class _Rows:
    """A batch's writes, encoded for the driver as they are decided."""

    def __init__(self, dialect: str, now: datetime, term: int) -> None:
        self.enc = bulk.Encoder(dialect)
        self.now = now
        self.term = term
        self.now_value = self.enc.datetime(now)
        # Rows due together share a few instants: parse and format each once.
        self._instants: dict[Any, datetime] = {}
        self._iso: dict[datetime | None, str | None] = {None: None}
        self.items: list[tuple[Any, ...]] = []
        self.fired: list[tuple[Any, ...]] = []
        self.advanced: list[tuple[Any, ...]] = []
        self.disabled: list[tuple[Any, ...]] = []
        self.ledger: list[tuple[Any, ...]] = []

    def instant(self, raw: Any) -> datetime:
        """A next_run as read (text on SQLite, datetime on PostgreSQL) as aware UTC."""
        value = self._instants.get(raw)
        if value is None:
            parsed = raw if isinstance(raw, datetime) else datetime.fromisoformat(raw)
            value = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
            self._instants[raw] = value
        return value

    def iso(self, value: datetime | None) -> str | None:
        """ISO text of an instant, memoized."""
        text = self._iso.get(value)
        if text is None and value is not None:
            text = self._iso[value] = value.isoformat()
        return text

    def fire(self, row: Any, due: datetime, decision: Decision, options: dict[str, Any]) -> None:
        enc = self.enc
        item_id = new_item_id(self.now)
        expiry = options.get("expires_after")
        expires = self.now + (timedelta(seconds=float(expiry)) if expiry else DEFAULT_EXPIRY)
        self.items.append(
            (
                enc.uuid(item_id), row.tenant, row.stack, row.environment, row.job,
                row.payload_text, "schedule", enc.uuid(row.id),
                enc.datetime(decision.scheduled_for),
                int(options.get("priority", DEFAULT_PRIORITY)), "queued", self.now_value,
                enc.datetime(expires), 0, int(options.get("max_attempts", 3)),
                self.now_value, self.now_value,
            )
        )  # fmt: skip
        self.fired.append((self.now, decision.next_run, row.id, row.next_run))
        self._ledger(row, due, decision, item_id)

    def skip(self, row: Any, due: datetime, decision: Decision) -> None:
        if decision.disables:
            self.disabled.append((None, self.now, row.id, row.next_run))
        else:
            self.advanced.append((decision.next_run, row.id, row.next_run))
        self._ledger(row, due, decision, None)

    def _ledger(self, row: Any, due: datetime, decision: Decision, item_id: UUID | None) -> None:
        enc = self.enc
        code, message = _LEDGER[decision.outcome]
        detail: dict[str, Any] = {
            "coalesced": decision.coalesced,
            "first_due": self.iso(due),
            "next_run": self.iso(decision.next_run),
            # The leader term that fired: audits which leader wrote each occurrence.
            "term": self.term,
        }
        if not decision.coalesced_exact:
            detail["coalesced_at_least"] = True
        if decision.error is not None:
            detail["error"] = decision.error
        self.ledger.append(
            (
                code.text, row.tenant, row.stack, row.environment, enc.uuid(row.id), row.name,
                enc.uuid(item_id), ACTOR, message, enc.datetime(decision.scheduled_for),
                self.now_value, self.now_value, enc.json(detail),
            )
        )  # fmt: skip
