"""A tenant's rows leaving one shard's database and reaching another's.

What moves is what defines the tenant: every table with a `tenant` column
except the history (events, queue items) and what the control database
keeps (tokens, the map itself). A new table with a `tenant` column moves
by default; `KEPT` names the exceptions (tests hold the list to the tables).

Each side is one transaction, and each is recorded in that shard's
`tenant_moves`, so a move interrupted anywhere is resumed, never redone:

- **leave** (the old shard): with the dispatcher lease row locked (an
  in-flight fire finishes first; the next waits), the rows are read into
  the "out" record and deleted. From its commit the old shard cannot fire
  the tenant: its rows are gone. A repeat returns the recorded rows.
- **land** (the new shard): the recorded rows are written, with an "in"
  record, in one transaction; a repeat finds the record and writes nothing.
  The new shard's leader fires them from its next tick (late rather than
  twice: what fell due between the two commits coalesces by the row's own
  misfire rules).

The tenant's items still queued on the old shard drain there: the "out"
record keeps the rows that left while any of them waits (`close_out`), and
a worker finds their job and schedule name in it (`left_behind`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Table, delete, func, select, update
from sqlalchemy.types import Uuid

from cronplane.core.model import Job
from cronplane.store import dialects, lease
from cronplane.store.jobs import job_from_mapping
from cronplane.store.tables import jobs, metadata, queue_items, schedules, tenant_moves
from cronplane.store.types import UTCDateTime

OUT = "out"
IN = "in"
# History stays where it happened; tokens and the map stay in the control database.
KEPT = frozenset({"events", "queue_items", "api_tokens", "tenant_shards", "tenant_moves"})

Rows = dict[str, list[dict[str, Any]]]


def moved_tables() -> list[Table]:
    """The tables whose rows move with a tenant, in a stable order."""
    return [
        table for table in metadata.sorted_tables if "tenant" in table.c and table.name not in KEPT
    ]


# How a row's values of these column types are written into a move's JSON record and read back.
_AS_JSON: list[tuple[type, Callable[[Any], Any], Callable[[Any], Any]]] = [
    (Uuid, str, UUID),
    (UTCDateTime, datetime.isoformat, datetime.fromisoformat),
]


def _convert(table: Table, row: dict[str, Any], *, to_json: bool) -> dict[str, Any]:
    """A row as JSON values (ids and instants as text) or back; the rest as they are."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        kind = table.c[name].type
        for column_type, dump, load in _AS_JSON:
            if value is not None and isinstance(kind, column_type):
                value = dump(value) if to_json else load(value)
        out[name] = value
    return out


def read_rows(conn: Connection, tenant: str) -> Rows:
    """Every moving row of `tenant`, table by table, as JSON values."""
    rows: Rows = {}
    for table in moved_tables():
        found = conn.execute(select(table).where(table.c.tenant == tenant)).mappings()
        rows[table.name] = [_convert(table, dict(row), to_json=True) for row in found]
    return rows


def _record(conn: Connection, tenant: str, epoch: int, direction: str) -> Any:
    return conn.execute(
        select(tenant_moves.c.rows).where(
            tenant_moves.c.tenant == tenant,
            tenant_moves.c.epoch == epoch,
            tenant_moves.c.direction == direction,
        )
    ).first()


def leave(conn: Connection, tenant: str, *, epoch: int, to: str, group: str, now: datetime) -> Rows:
    """On the old shard: stop the tenant's dispatch there and hand back its rows.

    Run inside the old shard's write transaction. The lock on the lease row
    of `group` (FOR UPDATE) waits for a fire transaction in flight (it holds
    the row FOR SHARE) and holds the next off until this one commits; on
    SQLite the write transaction already excludes every other writer.
    """
    recorded = _record(conn, tenant, epoch, OUT)
    if recorded is not None:  # a resumed move: what left then (nothing, once closed out)
        rows: Rows = recorded.rows or {}
        return rows
    lease.hold_still(conn, group)
    # Waits for a write of the tenant in flight (the insert fence takes it shared, 0026).
    dialect = dialects.of(conn)
    dialect.lock_scope(conn, fence_key(tenant))
    dialect.fence_moved_tenants(conn)
    rows = read_rows(conn, tenant)
    for table in reversed(moved_tables()):
        conn.execute(delete(table).where(table.c.tenant == tenant))
    conn.execute(
        tenant_moves.insert().values(
            tenant=tenant, epoch=epoch, direction=OUT, peer=to, rows=rows, at=now
        )
    )
    return rows


def land(
    conn: Connection, tenant: str, rows: Rows, *, epoch: int, came_from: str, now: datetime
) -> bool:
    """On the new shard: write the rows, once; False when this epoch had already landed."""
    if _record(conn, tenant, epoch, IN) is not None:
        return False
    # The record first: a shard the tenant left once fences its rows until it is back.
    conn.execute(
        tenant_moves.insert().values(
            tenant=tenant, epoch=epoch, direction=IN, peer=came_from, rows=None, at=now
        )
    )
    by_name = {table.name: table for table in moved_tables()}
    for table in moved_tables():
        conn.execute(delete(table).where(table.c.tenant == tenant))
    for name, table_rows in rows.items():
        table = by_name[name]
        if table_rows:
            conn.execute(
                table.insert(), [_convert(table, row, to_json=False) for row in table_rows]
            )
    return True


def fence_key(tenant: str) -> str:
    """The advisory lock a write of the tenant's rows takes shared and a move exclusively."""
    return f"cronplane-tenant/{tenant}"


def close_out(conn: Connection, tenant: str, epoch: int) -> None:
    """On the old shard, once the map names the new one: drop the carried rows, keep the record.

    While items of the tenant still wait here the rows stay: those items drain
    here, and a worker finds their job and schedule name in them (`left_behind`).
    """
    if waiting_items(conn, tenant):
        return
    conn.execute(
        update(tenant_moves)
        .where(
            tenant_moves.c.tenant == tenant,
            tenant_moves.c.epoch == epoch,
            tenant_moves.c.direction == OUT,
        )
        .values(rows=None)
    )


def left_behind(
    conn: Connection, tenants: Iterable[str]
) -> tuple[dict[tuple[str, str, str], Job], dict[UUID, str]]:
    """For items these tenants left queued here when they moved away: their jobs, by
    (tenant, stack, name), and their schedules' names, by id, as they left (the newest
    carried record wins)."""
    query = (
        select(tenant_moves.c.rows)
        .where(tenant_moves.c.tenant.in_(sorted(set(tenants))), tenant_moves.c.direction == OUT)
        .order_by(tenant_moves.c.epoch)
    )
    found: dict[tuple[str, str, str], Job] = {}
    names: dict[UUID, str] = {}
    for rows in conn.execute(query).scalars():
        for row in (rows or {}).get(jobs.name, []):
            job = job_from_mapping(_convert(jobs, row, to_json=False))
            found[(job.tenant, job.stack, job.name)] = job
        for row in (rows or {}).get(schedules.name, []):
            names[UUID(row["id"])] = row["name"]
    return found, names


def tenants_here(conn: Connection) -> list[str]:
    """The tenants with schedules or jobs in this database (what a drain moves)."""
    names = select(schedules.c.tenant).union(select(jobs.c.tenant))
    return sorted(str(name) for name in conn.execute(names).scalars())


def waiting_items(conn: Connection, tenant: str) -> int:
    """The tenant's items still queued or running here (they drain here after a move)."""
    query = (
        select(func.count())
        .select_from(queue_items)
        .where(queue_items.c.tenant == tenant, queue_items.c.status.in_(("queued", "running")))
    )
    return int(conn.execute(query).scalar_one())
