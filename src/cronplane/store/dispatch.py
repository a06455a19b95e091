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
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, bindparam, func, select, update

from cronplane import events as ev
from cronplane.core.firing import Decision, DueRow, NextAfter, Outcome, decide
from cronplane.store import lease
from cronplane.store.events import append_events, event_values
from cronplane.store.queue import DEFAULT_EXPIRY, DEFAULT_PRIORITY, has_active, item_values
from cronplane.store.tables import jobs, queue_items, schedules

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

_DUE_COLUMNS = (
    schedules.c.id,
    schedules.c.tenant,
    schedules.c.stack,
    schedules.c.environment,
    schedules.c.name,
    schedules.c.job,
    schedules.c.cron,
    schedules.c.timezone,
    schedules.c.payload,
    schedules.c.misfire_grace,
    schedules.c.overlap,
    schedules.c.next_run,
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


_ADVANCE = (
    update(schedules)
    .where(schedules.c.id == bindparam("b_id"), schedules.c.next_run == bindparam("b_old"))
    .values(next_run=bindparam("b_next"))
)
_FIRED = _ADVANCE.values(last_run=bindparam("b_now"))
_DISABLE = (
    update(schedules)
    .where(schedules.c.id == bindparam("b_id"), schedules.c.next_run == bindparam("b_old"))
    .values(
        enabled=False,
        next_run=None,
        updated_at=bindparam("b_now"),
        revision=schedules.c.revision + 1,
    )
)


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
    rows = conn.execute(due_query(now, limit, lock=is_pg)).all()
    crash_point("after_select")
    result = BatchResult(selected=len(rows))
    if not rows:
        return result
    options = _job_options(conn, rows)
    active = has_active(conn, [row.id for row in rows if row.overlap == "skip"])

    items: list[dict[str, Any]] = []
    fired: list[dict[str, Any]] = []
    advanced: list[dict[str, Any]] = []
    disabled: list[dict[str, Any]] = []
    ledger: list[dict[str, Any]] = []
    for row in rows:
        job_options = options.get((row.tenant, row.stack, row.job))
        decision = decide(
            DueRow(row.next_run, row.misfire_grace, row.overlap),
            now=now,
            next_after=_safe(occurrences, row.cron, row.timezone),
            job_active=job_options is not None,
            previous_active=row.id in active,
        )
        result.counts[decision.outcome] += 1
        params = {"b_id": row.id, "b_old": row.next_run, "b_next": decision.next_run, "b_now": now}
        item_id: UUID | None = None
        if decision.enqueues:
            assert job_options is not None
            values = _item(row, decision, job_options, now)
            item_id = values["id"]
            items.append(values)
            fired.append(params)
            result.fired_for.append(decision.scheduled_for)
        elif decision.disables:
            disabled.append(params)
        else:
            advanced.append(params)
        ledger.append(_ledger_event(row, decision, now, item_id, fencing.term))

    if items:
        conn.execute(queue_items.insert(), items)
    crash_point("after_insert")
    for statement, params_list in ((_FIRED, fired), (_ADVANCE, advanced), (_DISABLE, disabled)):
        if params_list:
            done = conn.execute(statement, params_list)
            # The rows are locked (or the database is), so the compare-and-set
            # cannot miss; if it ever did, roll the whole batch back.
            if conn.dialect.supports_sane_multi_rowcount and done.rowcount != len(params_list):
                raise RuntimeError("schedule rows changed under a fire transaction")
    crash_point("after_update")
    append_events(conn, ledger)
    crash_point("after_events")
    return result


def _safe(occurrences: Callable[[str, str], NextAfter], cron: str, timezone: str) -> NextAfter:
    """The row's occurrence function; a cron or zone that fails to load fails every call."""
    try:
        return occurrences(cron, timezone)
    except Exception as error:  # a bad stored row must not stop the loop (SPEC §6)
        message = f"{type(error).__name__}: {error}"

        def failing(_after: datetime) -> datetime | None:
            raise ValueError(message)

        return failing


def _item(row: Any, decision: Decision, options: dict[str, Any], now: datetime) -> dict[str, Any]:
    expiry = options.get("expires_after")
    return item_values(
        tenant=row.tenant,
        stack=row.stack,
        environment=row.environment,
        job=row.job,
        payload=row.payload,
        source="schedule",
        now=now,
        schedule_id=row.id,
        scheduled_for=decision.scheduled_for,
        priority=int(options.get("priority", DEFAULT_PRIORITY)),
        expires_at=now + (timedelta(seconds=float(expiry)) if expiry else DEFAULT_EXPIRY),
        max_attempts=int(options.get("max_attempts", 3)),
    )


def _ledger_event(
    row: Any, decision: Decision, now: datetime, item_id: UUID | None, term: int
) -> dict[str, Any]:
    code, message = _LEDGER[decision.outcome]
    detail: dict[str, Any] = {
        "coalesced": decision.coalesced,
        "first_due": row.next_run.isoformat(),
        "next_run": decision.next_run.isoformat() if decision.next_run else None,
        # The leader term that fired: audits which leader wrote each occurrence.
        "term": term,
    }
    if not decision.coalesced_exact:
        detail["coalesced_at_least"] = True
    if decision.error is not None:
        detail["error"] = decision.error
    return event_values(
        code,
        tenant=row.tenant,
        stack=row.stack,
        environment=row.environment,
        schedule_id=row.id,
        schedule_name=row.name,
        item_id=item_id,
        actor=ACTOR,
        message=message,
        now=now,
        scheduled_for=decision.scheduled_for,
        fired_at=now,
        detail=detail,
    )
