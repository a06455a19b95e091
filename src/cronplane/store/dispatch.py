"""The SQL of dispatch: the due-row scan and the fire transaction, batched.

One call of :func:`fire_batch` is one transaction holding up to `limit`
fires. Its steps, in order (each followed by a crash point, see
:func:`crash_point`)::

    fence     UPDATE leases … WHERE holder, term current and unexpired  → else Fenced, roll back
    select    due rows by ix_schedules_due (enabled AND next_run <= now),
              locked (FOR UPDATE SKIP LOCKED on PostgreSQL; BEGIN IMMEDIATE on SQLite)
    lookup    the rows' jobs (status, options) and which schedules have an item active
    decide    core.firing.decide once per distinct input (pure; rows share the result)
    insert    queue items                  (UNIQUE(schedule_id, scheduled_for))
    update    schedules: last_run/next_run, a compare-and-set on the next_run read
    events    the occurrence ledger
    commit

The two databases take one path each, after the fence:

- SQLite (`_fire_sqlite`): the select fills a temporary table with the due
  rows' keys and decision inputs; Python reads one row per distinct input,
  decides, and writes a plan row for it; the inserts and the update are one
  INSERT … SELECT / UPDATE … FROM each, joining the due rows to their plan.
  No per-row Python: SQLite copies payloads and names itself.
- PostgreSQL (`_fire_postgresql`): the due rows come to Python, which builds
  the items and events as COPY text; one UPDATE per decision. There the
  server's CPU, not Python, is the limit, and COPY is its cheapest insert.

Reading the due rows inside the fire transaction *is* the re-read SPEC §6
asks for: a row disabled, removed or rescheduled since the last look is simply
not selected. Nothing is written outside this transaction, so a crash at any
point leaves either all of a batch or none of it.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import chain
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Connection,
    String,
    Text,
    cast,
    func,
    literal,
    select,
    type_coerce,
)

from cronplane import events as ev
from cronplane.core.firing import Decision, DueRow, NextAfter, Outcome, decide
from cronplane.ids import time_ordered_hexes, time_ordered_run
from cronplane.store import bulk, lease
from cronplane.store.queue import DEFAULT_EXPIRY, DEFAULT_PRIORITY
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
# WAL pages a fire connection lets accumulate before its commit checkpoints
# (SQLite's default is 1,000, about 4 MB): room for a burst of ~25,000 fires.
SQLITE_FIRE_CHECKPOINT_PAGES = 10_000

_DUE_COLUMNS = (
    # PostgreSQL, after the id (see due_query). next_run comes back as the
    # driver gives it (no per-row type processing) and is written back
    # unchanged as the compare-and-set value.
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

# Positions in a due row (Row attribute access costs more than indexing).
_TENANT, _JOB, _OVERLAP = 1, 5, 10
# Its strings that are written to items and events: tenant, stack,
# environment, name, job, payload.
_WRITTEN_TEXT = (1, 2, 3, 4, 5, 8)

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


def count_due(conn: Connection, now: datetime, *, cap: int) -> int:
    """How many enabled rows are due at `now`, counting no further than `cap`."""
    due = (
        select(literal(1))
        .where(schedules.c.enabled, schedules.c.next_run <= now)
        .limit(cap)
        .subquery()
    )
    return int(conn.execute(select(func.count()).select_from(due)).scalar_one())


def checkpoint(conn: Connection) -> None:
    """After a burst on SQLite: move the WAL into the database file (PASSIVE: never waits).

    Fire transactions defer SQLite's automatic checkpoint (see _fire_sqlite),
    so its fsyncs come after the burst's last commit, not between its batches.
    A no-op on PostgreSQL.
    """
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")


def due_query(now: datetime, limit: int) -> Any:
    """PostgreSQL: enabled rows with next_run <= now, earliest first, locked (SKIP LOCKED).

    A range scan of ix_schedules_due. Ids come back as text, which COPY takes
    as it is (a UUID object would be formatted per row); the last column is
    the key the batch's UPDATEs find each row by (the id again).
    """
    sid = cast(schedules.c.id, Text)
    query = (
        select(sid.label("id"), *_DUE_COLUMNS, sid.label("row_key"))
        .where(schedules.c.enabled, schedules.c.next_run <= now)
        .order_by(schedules.c.next_run)
        .limit(limit)
    )
    # A row being edited is skipped, not waited for: the next tick sees it.
    return query.with_for_update(skip_locked=True)


def _active(conn: Connection, ids: Sequence[str]) -> set[str]:
    """PostgreSQL: of the (text) schedule ids, those with an item queued or running."""
    if not ids:
        return set()
    sql = (
        "SELECT DISTINCT schedule_id::text FROM queue_items "
        "WHERE status IN ('queued', 'running') AND schedule_id = ANY(CAST(%s AS uuid[]))"
    )
    return {row[0] for row in conn.exec_driver_sql(sql, (bulk.pg_array(ids),))}


def _job_options(
    conn: Connection, tenants: set[str], names: set[str]
) -> dict[tuple[str, str, str], Any]:
    """Active jobs among `tenants` × `names`, keyed (tenant, stack, name) → options."""
    found = conn.execute(
        select(jobs.c.tenant, jobs.c.stack, jobs.c.name, jobs.c.options).where(
            jobs.c.tenant.in_(tenants), jobs.c.name.in_(names), jobs.c.status == "active"
        )
    )
    return {(j.tenant, j.stack, j.name): j.options or {} for j in found}


# Schedule row changes, per outcome: the columns set (their values come from
# the plan) and any further assignment. Each is a compare-and-set on the
# next_run the batch read.
_ROW_CHANGES: dict[Outcome, tuple[tuple[str, ...], str]] = {
    Outcome.FIRE: (("last_run", "next_run"), ""),
    Outcome.SKIPPED_OVERLAP: (("next_run",), ""),
    Outcome.SKIPPED_MISFIRE: (("next_run",), ""),
    Outcome.JOB_MISSING: (("next_run",), ""),
    # Disabling is a definition change (unlike a fire), so it bumps the revision.
    Outcome.CALC_FAILED: (("next_run", "updated_at"), "enabled = false, revision = revision + 1"),
}


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
    planner = _Planner(conn.dialect.name, now, fencing.term, _Occurrences(occurrences))
    if conn.dialect.name == "sqlite":
        return _fire_sqlite(conn, planner, limit)
    return _fire_postgresql(conn, planner, limit)


def _fire_postgresql(conn: Connection, planner: _Planner, limit: int) -> BatchResult:
    """The batch's rows built in Python, written by COPY (server CPU is PostgreSQL's limit)."""
    now = planner.now
    rows = conn.execute(due_query(now, limit)).all()
    crash_point("after_select")
    result = BatchResult(selected=len(rows))
    if not rows:
        return result
    options = _job_options(conn, {row[_TENANT] for row in rows}, {row[_JOB] for row in rows})
    active = _active(conn, [row[0] for row in rows if row[_OVERLAP] == "skip"])
    rows_out = _Rows(planner)
    # In schedule-id order: the inserts into the indexes keyed by schedule id
    # (the unique occurrence key, the overlap index, the ledger's index) then
    # walk each index in order instead of landing on random pages.
    ordered = sorted(rows, key=itemgetter(0))
    safe = _copy_safe(ordered)
    if safe is not ordered:
        # The rows' names are now COPY text: look their jobs up the same way.
        escape = bulk.copy_escape
        options = {(escape(t), escape(s), escape(n)): v for (t, s, n), v in options.items()}
    rows_out.add(safe, options, active)
    for plan in planner.plans.values():
        result.counts[plan.decision.outcome] += plan.count
    result.fired_for = rows_out.fired_for

    bulk.insert_rows(conn, queue_items, ITEM_COLUMNS, rows_out.items)
    crash_point("after_insert")
    for plan in planner.plans.values():
        set_columns, extra = _ROW_CHANGES[plan.decision.outcome]
        matched = bulk.update_in(
            conn,
            schedules,
            set_columns,
            plan.set_values,
            match=("next_run", plan.due_raw),
            key="id",
            keys=plan.keys,
            extra_set=extra,
        )
        # The rows are locked (or the whole database is), so the compare-and-set
        # cannot miss; if it ever did, roll the whole batch back.
        if matched != len(plan.keys):
            raise RuntimeError("schedule rows changed under a fire transaction")
    crash_point("after_update")
    bulk.insert_rows(conn, events, EVENT_COLUMNS, rows_out.ledger)
    crash_point("after_events")
    return result


# -- SQLite: the batch's writes as statements over a temporary table of its rows ----

# The batch's due rows in schedule-id order (n counts them from 1): rowid,
# next_run as read, and `inputs`, the decision inputs and job as one JSON
# array, so rows that share them share one key (one text compare, where a
# sort or join on nine columns cost more than the rest of the statement).
# Temporary tables belong to this connection and take part in its transaction.
_FIRE_DUE = (
    "CREATE TEMP TABLE IF NOT EXISTS fire_due (n INTEGER PRIMARY KEY, k INTEGER NOT NULL, "
    "next_run TEXT NOT NULL, inputs TEXT NOT NULL)"
)
# One row per distinct inputs: what its rows' items, updates and events get.
_FIRE_PLAN_COLUMNS = (
    "inputs", "fires", "code", "message", "detail", "scheduled_for", "priority", "expires_at",
    "max_attempts", "last_run", "next_run", "disables",
)  # fmt: skip
_FIRE_PLAN = (
    "CREATE TEMP TABLE IF NOT EXISTS fire_plan (inputs TEXT PRIMARY KEY, "
    "fires INTEGER NOT NULL, code TEXT, message TEXT, detail TEXT, scheduled_for TEXT, "
    "priority INTEGER, expires_at TEXT, max_attempts INTEGER, last_run TEXT, next_run TEXT, "
    "disables INTEGER NOT NULL) WITHOUT ROWID"
)
# A range scan of ix_schedules_due (`enabled = 1` matches its condition); the
# overlap rule is an index probe per row (ix_queue_items_schedule).
_SELECT_DUE = """
INSERT INTO temp.fire_due (k, next_run, inputs)
SELECT k, next_run,
    json_array(next_run, cron, timezone, misfire_grace, overlap, active, tenant, stack, job)
FROM (
    SELECT rowid AS k, id, next_run, cron, timezone, misfire_grace, overlap, tenant, stack, job,
        overlap = 'skip' AND EXISTS (
            SELECT 1 FROM queue_items AS q
            WHERE q.schedule_id = schedules.id AND q.status IN ('queued', 'running')
        ) AS active
    FROM schedules WHERE enabled = 1 AND next_run <= :now ORDER BY next_run LIMIT :limit
)
ORDER BY id
"""
_GROUPS = "SELECT inputs, count(*) FROM temp.fire_due GROUP BY inputs"
# CROSS JOIN: SQLite keeps this join order, so the due rows drive (in n order)
# and each finds its plan and schedule row by key; left to itself the planner
# may scan all of schedules to save the sort.
_ROWS = (
    "FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p CROSS JOIN schedules AS s "
    "WHERE p.inputs = d.inputs AND s.rowid = d.k"
)
# In schedule-id order, so the indexes keyed by schedule id (the occurrence
# key, the overlap index, the ledger's index) are walked in order; item ids
# count up with n, so the primary key is appended to.
_INSERT_ITEMS = f"""
INSERT INTO queue_items ({", ".join(ITEM_COLUMNS)})
SELECT :id_prefix || printf('%015x', :id_first + d.n - 1),
    s.tenant, s.stack, s.environment, s.job, s.payload, 'schedule', s.id, p.scheduled_for,
    p.priority, 'queued', :now, p.expires_at, 0, p.max_attempts, :now, :now
{_ROWS} AND p.fires ORDER BY d.n
"""
# The compare-and-set on the next_run read: a row changed since is not matched.
_UPDATE_SCHEDULES = """
UPDATE schedules SET last_run = coalesce(p.last_run, schedules.last_run), next_run = p.next_run,
    enabled = NOT p.disables, revision = schedules.revision + p.disables,
    updated_at = CASE WHEN p.disables THEN :now ELSE schedules.updated_at END
FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p
WHERE p.inputs = d.inputs AND schedules.rowid = d.k AND schedules.next_run = d.next_run
"""
# A fire's event finds its item by the occurrence key.
_INSERT_EVENTS = f"""
INSERT INTO events ({", ".join(EVENT_COLUMNS)})
SELECT p.code, s.tenant, s.stack, s.environment, s.id, s.name, q.id, :actor, p.message,
    p.scheduled_for, :now, :now, p.detail
FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p CROSS JOIN schedules AS s
LEFT JOIN queue_items AS q ON p.fires AND q.schedule_id = s.id
    AND q.scheduled_for = p.scheduled_for
WHERE p.inputs = d.inputs AND s.rowid = d.k ORDER BY d.n
"""


def _fire_sqlite(conn: Connection, planner: _Planner, limit: int) -> BatchResult:
    """The batch's rows copied and written by SQLite itself; Python decides once per group.

    Python reads one row per distinct decision input and job (not one per
    due row) and writes one plan row for each; every write is one INSERT …
    SELECT or UPDATE … FROM joining the due rows to their plan.
    """
    # The indexes keyed by (random) schedule ids take a batch's inserts all
    # over, and SQLite's default 2 MB page cache turns a large batch into
    # page churn. A bigger cache for this connection only.
    conn.exec_driver_sql(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    # A checkpoint waits on fsync (60-90 ms here); at the default interval
    # every second commit of a burst ran one. The dispatcher checkpoints
    # once the burst is committed instead (`checkpoint`). Durability is
    # unchanged for a crashed process; after a power loss, WAL + NORMAL
    # can lose the commits since the last checkpoint, now up to this many
    # pages instead of 1,000.
    conn.exec_driver_sql(f"PRAGMA wal_autocheckpoint = {SQLITE_FIRE_CHECKPOINT_PAGES}")
    conn.exec_driver_sql(_FIRE_DUE)
    conn.exec_driver_sql(_FIRE_PLAN)
    # Emptied first, so n counts this batch's rows from 1 (the item ids' counter).
    conn.exec_driver_sql("DELETE FROM temp.fire_due")
    conn.exec_driver_sql("DELETE FROM temp.fire_plan")
    now = planner.now_value
    selected = conn.exec_driver_sql(_SELECT_DUE, {"now": now, "limit": limit}).rowcount
    crash_point("after_select")
    result = BatchResult(selected=selected)
    if not selected:
        return result
    groups = conn.exec_driver_sql(_GROUPS).all()
    # inputs: [next_run, cron, timezone, misfire_grace, overlap, active, tenant, stack, job]
    decoded = [json.loads(inputs) for inputs, _count in groups]
    options = _job_options(conn, {v[6] for v in decoded}, {v[8] for v in decoded})
    plan_rows = []
    for (inputs, count), values in zip(groups, decoded, strict=True):
        next_raw, cron, timezone, grace, overlap, active, tenant, stack, job = values
        job_key = (tenant, stack, job)
        job_options = options.get(job_key)
        plan = planner.plan(
            (next_raw, cron, timezone, grace, overlap, bool(active), job_options is not None)
        )
        decision = plan.decision
        result.counts[decision.outcome] += count
        item_options: tuple[Any, Any, Any] = (None, None, None)  # priority, expiry, attempts
        if decision.enqueues:
            assert job_options is not None  # FIRE implies an active job
            item_options = planner.job_plan(job_key, job_options)
            result.fired_for.extend([decision.scheduled_for] * count)
        plan_rows.append(
            (
                inputs, decision.enqueues, plan.code, plan.message, plan.detail,
                plan.scheduled_for, *item_options, now if decision.enqueues else None,
                planner.enc.datetime(decision.next_run), decision.disables,
            )
        )  # fmt: skip
    bulk.insert_values(conn, "temp.fire_plan", _FIRE_PLAN_COLUMNS, plan_rows)
    ids = time_ordered_run(planner.now, selected)
    conn.exec_driver_sql(
        _INSERT_ITEMS, {"id_prefix": ids.prefix, "id_first": ids.first, "now": now}
    )
    crash_point("after_insert")
    # The whole database is locked (BEGIN IMMEDIATE), so the compare-and-set
    # cannot miss; if it ever did, roll the whole batch back.
    if conn.exec_driver_sql(_UPDATE_SCHEDULES, {"now": now}).rowcount != selected:
        raise RuntimeError("schedule rows changed under a fire transaction")
    crash_point("after_update")
    conn.exec_driver_sql(_INSERT_EVENTS, {"actor": ACTOR, "now": now})
    crash_point("after_events")
    return result


def _copy_safe(rows: Sequence[Any]) -> Sequence[Any]:
    """PostgreSQL: the rows, with their written strings escaped for COPY if any needs it.

    One scan of the batch's strings; escaping (rare: a payload with a
    backslash) copies the rows.
    """
    fields = itemgetter(*_WRITTEN_TEXT)
    if not bulk.needs_copy_escape("".join(chain.from_iterable(map(fields, rows)))):
        return rows
    escape = bulk.copy_escape
    return [
        tuple(escape(value) if n in _WRITTEN_TEXT else value for n, value in enumerate(row))
        for row in rows
    ]


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


@dataclass(slots=True)
class _Plan:
    """One decision shared by every due row with the same inputs, encoded once.

    `decide` is pure, so rows due at one instant with one cron, zone, grace,
    overlap rule, job state and overlap state get one decision: a burst of
    10,000 rows is a handful of plans. On PostgreSQL a plan's rows get one
    UPDATE (they all move to one next_run); `set_values` and `keys` are that
    path's.
    """

    decision: Decision
    due_raw: Any  # the next_run read, as stored: the compare-and-set value
    code: str
    message: str
    scheduled_for: Any  # encoded
    set_values: tuple[Any, ...]  # encoded, in _ROW_CHANGES order
    detail: Any  # the ledger event's JSON text, encoded
    keys: list[Any] = field(default_factory=list)  # the rows' keys (due_query)

    @property
    def count(self) -> int:
        """Due rows this decision stands for."""
        return len(self.keys)


class _Planner:
    """A batch's decisions, one per distinct input, and its jobs' item options, encoded."""

    def __init__(self, dialect: str, now: datetime, term: int, next_after: _Occurrences) -> None:
        # Values for inserted rows (COPY text on PostgreSQL) and for UPDATE parameters.
        self.enc = bulk.row_encoder(dialect)
        self.params = bulk.Encoder(dialect)
        self.now = now
        self.term = term
        self.next_after = next_after
        self.now_value = self.enc.datetime(now)
        self.now_param = self.params.datetime(now)
        self.plans: dict[tuple[Any, ...], _Plan] = {}
        # (tenant, stack, job) → encoded (priority, expires_at, max_attempts)
        self._job_plans: dict[tuple[str, str, str], tuple[Any, Any, Any]] = {}

    def plan(self, key: tuple[Any, ...]) -> _Plan:
        """The decision for (next_run as read, cron, zone, grace, overlap, active, job active)."""
        found = self.plans.get(key)
        if found is None:
            found = self.plans[key] = self._plan(key)
        return found

    def _plan(self, key: tuple[Any, ...]) -> _Plan:
        next_raw, cron, timezone, grace, overlap, previous_active, job_active = key
        due = _instant(next_raw)
        decision = decide(
            DueRow(due, grace, overlap),
            now=self.now,
            next_after=self.next_after.of(cron, timezone),
            job_active=job_active,
            previous_active=previous_active,
        )
        code, message = _LEDGER[decision.outcome]
        detail: dict[str, Any] = {
            "coalesced": decision.coalesced,
            "first_due": due.isoformat(),
            "next_run": None if decision.next_run is None else decision.next_run.isoformat(),
            # The leader term that fired: audits which leader wrote each occurrence.
            "term": self.term,
        }
        if not decision.coalesced_exact:
            detail["coalesced_at_least"] = True
        if decision.error is not None:
            detail["error"] = decision.error
        enc, params = self.enc, self.params
        set_values: tuple[Any, ...]
        if decision.enqueues:  # last_run, next_run
            set_values = (self.now_param, params.datetime(decision.next_run))
        elif decision.disables:  # next_run, updated_at
            set_values = (None, self.now_param)
        else:  # next_run
            set_values = (params.datetime(decision.next_run),)
        return _Plan(
            decision,
            next_raw,
            code.text,
            message,
            enc.datetime(decision.scheduled_for),
            set_values,
            enc.json(detail),
        )

    def job_plan(self, key: tuple[str, str, str], options: dict[str, Any]) -> tuple[Any, Any, Any]:
        """A job's item (priority, expires_at, max_attempts), encoded."""
        found = self._job_plans.get(key)
        if found is None:
            expiry = options.get("expires_after")
            expires = self.now + (timedelta(seconds=float(expiry)) if expiry else DEFAULT_EXPIRY)
            enc = self.enc
            found = self._job_plans[key] = (
                enc.int(int(options.get("priority", DEFAULT_PRIORITY))),
                enc.datetime(expires),
                enc.int(int(options.get("max_attempts", 3))),
            )
        return found


class _Rows:
    """PostgreSQL: a batch's item and event rows, as COPY text, built as they are decided."""

    def __init__(self, planner: _Planner) -> None:
        self.planner = planner
        self.items: list[tuple[Any, ...]] = []
        self.ledger: list[tuple[Any, ...]] = []
        self.fired_for: list[datetime] = []

    def add(
        self,
        rows: Sequence[Any],
        options: dict[tuple[str, str, str], Any],
        active: set[Any],
    ) -> None:
        """Decide and encode every due row.

        Written as one flat loop over plain locals because it runs once per
        fire: per-row method calls, attribute lookups and encoding were most
        of a batch's Python time.
        """
        planner = self.planner
        now_value, zero, null = planner.now_value, planner.enc.int(0), planner.enc.null
        plans, plan_for, job_plan_for = planner.plans, planner.plan, planner.job_plan
        items, ledger, fired_for = self.items, self.ledger, self.fired_for
        item_ids = iter(time_ordered_hexes(planner.now, len(rows)))
        fire = Outcome.FIRE
        # Column order of due_query; the id and next_run are the stored values.
        for (
            sid, tenant, stack, environment, name, job, cron, timezone, payload, grace, overlap,
            next_raw, row_key,
        ) in rows:  # fmt: skip
            job_key = (tenant, stack, job)
            job_options = options.get(job_key)
            key = (next_raw, cron, timezone, grace, overlap, sid in active, job_options is not None)
            plan = plans.get(key)
            if plan is None:
                plan = plan_for(key)
            plan.keys.append(row_key)
            item_id = null
            if plan.decision.outcome is fire:
                assert job_options is not None  # FIRE implies an active job
                priority, expires, max_attempts = job_plan_for(job_key, job_options)
                item_id = next(item_ids)
                items.append(
                    (
                        item_id, tenant, stack, environment, job, payload, "schedule", sid,
                        plan.scheduled_for, priority, "queued", now_value, expires, zero,
                        max_attempts, now_value, now_value,
                    )
                )  # fmt: skip
                fired_for.append(plan.decision.scheduled_for)
            ledger.append(
                (
                    plan.code, tenant, stack, environment, sid, name, item_id, ACTOR, plan.message,
                    plan.scheduled_for, now_value, now_value, plan.detail,
                )
            )  # fmt: skip


def _instant(raw: Any) -> datetime:
    """A next_run as read (text on SQLite, datetime on PostgreSQL) as aware UTC."""
    parsed = raw if isinstance(raw, datetime) else datetime.fromisoformat(raw)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
