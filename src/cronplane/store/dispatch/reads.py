"""The dispatcher's reads: when the next row is due, how many are, a batch's rows and lookups."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

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

from cronplane.store import bulk
from cronplane.store.tables import jobs, schedules

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


def _due(now: datetime) -> tuple[ColumnElement[bool], ...]:
    """What "due" means (the partial index ix_schedules_due answers it)."""
    return (schedules.c.enabled, schedules.c.next_run <= now)


def earliest_next_run(conn: Connection) -> datetime | None:
    """The earliest next_run of an enabled schedule (an index lookup)."""
    value: datetime | None = conn.execute(
        select(func.min(schedules.c.next_run)).where(schedules.c.enabled)
    ).scalar()
    return value


def count_due(conn: Connection, now: datetime, *, cap: int) -> int:
    """How many enabled rows are due at `now`, counting no further than `cap`."""
    due = select(literal(1)).where(*_due(now)).limit(cap).subquery()
    return int(conn.execute(select(func.count()).select_from(due)).scalar_one())


def due_query(now: datetime, limit: int) -> Any:
    """PostgreSQL: enabled rows with next_run <= now, earliest first, locked (SKIP LOCKED).

    A range scan of ix_schedules_due. Ids come back as text, which COPY takes
    as it is (a UUID object would be formatted per row); the last column is
    the key the batch's UPDATEs find each row by (the id again).
    """
    sid = cast(schedules.c.id, Text)
    query = (
        select(sid.label("id"), *_DUE_COLUMNS, sid.label("row_key"))
        .where(*_due(now))
        .order_by(schedules.c.next_run)
        .limit(limit)
    )
    # A row being edited is skipped, not waited for: the next tick sees it.
    return query.with_for_update(skip_locked=True)


def active(conn: Connection, ids: Sequence[str]) -> set[str]:
    """PostgreSQL: of the (text) schedule ids, those with an item queued or running."""
    if not ids:
        return set()
    sql = (
        "SELECT DISTINCT schedule_id::text FROM queue_items "
        "WHERE status IN ('queued', 'running') AND schedule_id = ANY(CAST(%s AS uuid[]))"
    )
    return {row[0] for row in conn.exec_driver_sql(sql, (bulk.pg_array(ids),))}


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
