"""The dispatcher's reads: when the next row is due, how many are, a batch's rows and lookups."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    String,
    Text,
    cast,
    func,
    literal,
    select,
    type_coerce,
)

from cronplane.core.firing import POLICY_FIELDS
from cronplane.store import bulk
from cronplane.store.tables import jobs, schedules


class DueWhen(NamedTuple):
    """When a due row is due, and what finds its next occurrence."""

    # As stored (no per-row type processing): written back unchanged as the
    # compare-and-set value.
    next_run: Any
    cron: str
    timezone: str


# A due row's decision inputs: when it is due, then its policy columns
# (core.firing.POLICY_FIELDS). Rows that share them share one decision
# (planner.Planner.plan). Both fire paths read them by these names:
# PostgreSQL selects them after the written columns (DUE_FIELDS), SQLite packs
# them into one `json_array` key (sqlite.py).
INPUT_FIELDS: tuple[str, ...] = DueWhen._fields + POLICY_FIELDS
# The decision inputs that are not a column of their own, as SQL both databases read.
DERIVED_INPUTS: dict[str, str] = {"runs_left": "max_runs - run_count"}


class DueWritten(NamedTuple):
    """PostgreSQL: the leading columns of a due row, those copied into items and events."""

    id: str  # as text, which COPY takes as it is (a UUID object is formatted per row)
    tenant: str
    stack: str
    environment: str
    name: str
    job: str
    # The payload is copied into the item as stored: no decode/encode per fire.
    payload: str
    timeout: int | None  # the row's own; None: the job's
    row_key: str  # what the batch's UPDATEs find the row by (the id again)


# A PostgreSQL due row: the written columns, then the decision inputs.
DUE_FIELDS = DueWritten._fields + INPUT_FIELDS
# Where a due row's columns are not the stored column itself.
_DUE_EXPRESSIONS: dict[str, Any] = {
    "id": cast(schedules.c.id, Text),
    "payload": cast(schedules.c.payload, Text),
    "row_key": cast(schedules.c.id, Text),
    "next_run": type_coerce(schedules.c.next_run, String),
    "runs_left": schedules.c.max_runs - schedules.c.run_count,
}
_DUE_COLUMNS = tuple(
    (_DUE_EXPRESSIONS[name] if name in _DUE_EXPRESSIONS else schedules.c[name]).label(name)
    for name in DUE_FIELDS
)


def _due(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """What "due" means (the partial index ix_schedules_due answers it)."""
    return (schedules.c.enabled, schedules.c.next_run <= now)


def earliest_next_run(conn: Connection) -> datetime | None:
    """The earliest next_run of an enabled schedule (an index lookup)."""
    value: datetime | None = conn.execute(
        select(func.min(schedules.c.next_run)).where(schedules.c.enabled)
    ).scalar()
    return value


def count_due(conn: Connection, now: datetime, *, cap: int | None = None) -> int:
    """How many enabled rows are due at `now`, counting no further than `cap` (if given)."""
    due = select(literal(1)).where(*_due(now)).limit(cap).subquery()
    return int(conn.execute(select(func.count()).select_from(due)).scalar_one())


def due_query(now: datetime, limit: int) -> Any:
    """PostgreSQL: enabled rows with next_run <= now, earliest first, locked (SKIP LOCKED).

    A range scan of ix_schedules_due; each row is DUE_FIELDS.
    """
    query = select(*_DUE_COLUMNS).where(*_due(now)).order_by(schedules.c.next_run).limit(limit)
    # A row being edited is skipped, not waited for: the next tick sees it.
    return query.with_for_update(skip_locked=True)


def active(conn: Connection, ids: Sequence[str]) -> dict[str, int]:
    """PostgreSQL: of the (text) schedule ids, those with an item queued or running.

    Each maps to planner.QUEUED | planner.RUNNING (1: one waits, 2: one runs).
    """
    if not ids:
        return {}
    sql = (
        "SELECT schedule_id::text, bit_or(CASE status WHEN 'queued' THEN 1 ELSE 2 END) "
        "FROM queue_items WHERE status IN ('queued', 'running') "
        "AND schedule_id = ANY(CAST(%s AS uuid[])) GROUP BY schedule_id"
    )
    return {row[0]: int(row[1]) for row in conn.exec_driver_sql(sql, (bulk.pg_array(ids),))}


def job_options(
    conn: Connection, tenants: set[str], names: set[str]
) -> dict[tuple[str, str, str], Any]:
    """Active jobs among `tenants` × `names`, keyed (tenant, stack, name) → options."""
    found = conn.execute(
        select(jobs.c.tenant, jobs.c.stack, jobs.c.name, jobs.c.options).where(
            jobs.c.tenant.in_(tenants), jobs.c.name.in_(names), jobs.c.status == "active"
        )
    )
    return {(j.tenant, j.stack, j.name): j.options or {} for j in found}
