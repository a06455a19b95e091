"""The schedule_versions table: writing a row's versions, reading and pruning them.

`record` is called by store.schedules on every write of a definition (insert,
an update that moves the revision on, a payload set, a delete), in the
caller's transaction, so no path can change a definition without leaving a
version. A row's next number is its highest plus one, read after the row's
own UPDATE (which locks it on PostgreSQL; SQLite has one writer): two
editors of a row are serialized by that lock, and the primary key
(schedule_id, number) refuses a duplicate if anything ever slipped past it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Column, Connection, Row, Table, and_, delete, exists, func, select

from cronplane.core.codec import field_names
from cronplane.core.model import Schedule
from cronplane.core.versions import KEEP_LAST, Change, Version, definition_of
from cronplane.store.tables import schedule_versions, schedules

# In the order of Version's fields, so a row maps by position (a listing maps thousands).
_COLUMNS = tuple(schedule_versions.c[name] for name in field_names(Version))


def _version(row: Row[Any]) -> Version:
    return Version(*row)  # type: ignore[call-arg]  # the columns are its fields, in order


def latest_numbers(conn: Connection, ids: Sequence[UUID]) -> dict[UUID, int]:
    """The highest version number of each of these rows (a row with none is absent)."""
    found: dict[UUID, int] = {}
    # Chunks keep the IN list under SQLite's bound-parameter limit.
    for start in range(0, len(ids), 500):
        query = (
            select(schedule_versions.c.schedule_id, func.max(schedule_versions.c.number))
            .where(schedule_versions.c.schedule_id.in_(ids[start : start + 500]))
            .group_by(schedule_versions.c.schedule_id)
        )
        found.update({row[0]: int(row[1]) for row in conn.execute(query)})
    return found


def record(
    conn: Connection, rows: Sequence[Schedule], change: Change, *, removed: bool = False
) -> None:
    """Write one version of each row as it now stands (or stood, when `removed`)."""
    if not rows:
        return
    numbers = latest_numbers(conn, [row.id for row in rows])
    values = [
        {
            "schedule_id": row.id,
            "number": numbers.get(row.id, 0) + 1,
            "tenant": row.tenant,
            "stack": row.stack,
            "environment": row.environment,
            "name": row.name,
            "definition": definition_of(row),
            "actor": change.actor,
            "via": change.via,
            "at": change.at,
            "reason": change.reason,
            "digest": change.digest,
            "app_version": change.app_version,
            "removed": removed,
        }
        for row in rows
    ]
    conn.execute(schedule_versions.insert(), values)


def list_versions(
    conn: Connection, schedule_id: UUID, *, limit: int = 100, before: int | None = None
) -> list[Version]:
    """A row's versions, newest first, from below `before` (the primary key's range)."""
    found = version_page(
        conn, _COLUMNS, schedule_versions.c.schedule_id, schedule_id, limit, before
    )
    return [_version(row) for row in found]


def get_version(conn: Connection, schedule_id: UUID, number: int) -> Version | None:
    """One version of a row, or None."""
    row = version_row(conn, _COLUMNS, schedule_versions.c.schedule_id, schedule_id, number)
    return None if row is None else _version(row)


def version_page(
    conn: Connection,
    columns: Sequence[Column[Any]],
    owner: Column[Any],
    owner_id: UUID,
    limit: int,
    before: int | None,
) -> Sequence[Row[Any]]:
    """The one listing of every version table (schedule_versions, job_versions): an
    owner's versions, newest first, below `before`: a range of the primary key
    (owner, number), so a page costs the same however long the history."""
    number = owner.table.c.number
    query = select(*columns).where(owner == owner_id)
    if before is not None:
        query = query.where(number < before)
    return conn.execute(query.order_by(number.desc()).limit(limit)).all()


def version_row(
    conn: Connection,
    columns: Sequence[Column[Any]],
    owner: Column[Any],
    owner_id: UUID,
    number: int,
) -> Row[Any] | None:
    """One version of an owner in a version table, or None."""
    query = select(*columns).where(owner == owner_id, owner.table.c.number == number)
    return conn.execute(query).first()


def last_of_name(
    conn: Connection, tenant: str, stack: str, environment: str, name: str
) -> Version | None:
    """The newest version written under this key, of whichever row held it."""
    query = (
        select(*_COLUMNS)
        .where(
            schedule_versions.c.tenant == tenant,
            schedule_versions.c.stack == stack,
            schedule_versions.c.environment == environment,
            schedule_versions.c.name == name,
        )
        .order_by(schedule_versions.c.at.desc(), schedule_versions.c.number.desc())
        .limit(1)
    )
    row = conn.execute(query).first()
    return None if row is None else _version(row)


def prune(conn: Connection, before: datetime, keep_last: int = KEEP_LAST) -> int:
    """Delete versions made before `before`, except each live row's last `keep_last`;
    a deleted row's versions all go once they are past it. Returns how many went."""
    return prune_versions(
        conn, schedule_versions, schedule_versions.c.schedule_id, schedules.c.id, before, keep_last
    )


def prune_versions(
    conn: Connection,
    table: Table,
    owner: Column[Any],
    live_id: Column[Any],
    before: datetime,
    keep_last: int = KEEP_LAST,
) -> int:
    """The one pruning rule of every version table (schedule_versions, job_versions):
    delete `table`'s rows made before `before` except the last `keep_last` of each
    owner (`owner`: the table's owner column) still live (`live_id`: the owners'
    key); an owner gone keeps none once they are past. Returns how many went."""
    newer = table.alias("newer")
    # An owner's numbers have no gap: the last keep_last are above its highest - keep_last.
    among_older = (
        table.c.number
        <= select(func.max(newer.c.number)).where(newer.c[owner.name] == owner).scalar_subquery()
        - keep_last
    )
    live = exists().where(live_id == owner)
    query = delete(table).where(and_(table.c.at < before, among_older | ~live))
    return int(conn.execute(query).rowcount)
