"""The tenant_quotas table and the usage counts the quotas are judged against.

Every count is one index range: schedules by ix_schedules_tenant_name, jobs
by their unique key, items by ix_queue_items_tenant (tenant, created_at).
A count that only has to be compared with a limit stops at the limit
(`cap`), so judging a quota costs no more than the quota allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, literal, select, union

from cronplane.core.quotas import QUOTA_FIELDS, Quota
from cronplane.store import dialects
from cronplane.store.tables import jobs, queue_items, schedules, tenant_quotas

_LIMIT_COLUMNS = tuple(tenant_quotas.c[name] for name in QUOTA_FIELDS)


def _quota(row: Any) -> Quota:
    return Quota(**{name: row._mapping[name] for name in QUOTA_FIELDS})


def overrides(conn: Connection, tenants: Iterable[str] | None = None) -> dict[str, Quota]:
    """The tenants' own rows (all rows when `tenants` is None): tenant → the limits it sets."""
    query = select(tenant_quotas.c.tenant, *_LIMIT_COLUMNS)
    if tenants is not None:
        query = query.where(tenant_quotas.c.tenant.in_(sorted(set(tenants))))
    return {row.tenant: _quota(row) for row in conn.execute(query)}


def override(conn: Connection, tenant: str) -> Quota:
    """The tenant's own limits (all None when it has no row): one primary-key lookup."""
    return overrides(conn, [tenant]).get(tenant, Quota())


def fire_overrides(conn: Connection) -> dict[str, Quota]:
    """The rows that set a fire-time limit (the fire path's one lookup per batch)."""
    query = select(tenant_quotas.c.tenant, *_LIMIT_COLUMNS).where(
        (tenant_quotas.c.max_fires_per_minute.is_not(None))
        | (tenant_quotas.c.max_queued.is_not(None))
    )
    return {row.tenant: _quota(row) for row in conn.execute(query)}


def save(conn: Connection, tenant: str, limits: Quota, *, now: datetime, actor: str) -> None:
    """Write the tenant's own limits (a row of all NULLs is deleted: defaults apply)."""
    conn.execute(tenant_quotas.delete().where(tenant_quotas.c.tenant == tenant))
    values = limits.to_dict()
    if any(value is not None for value in values.values()):
        conn.execute(
            tenant_quotas.insert().values(tenant=tenant, **values, updated_at=now, updated_by=actor)
        )


def lock_tenant(conn: Connection, tenant: str) -> None:
    """Serialize a tenant's counted writes until commit (PostgreSQL advisory lock), so two
    creates cannot both pass a count that has room for one. SQLite's write transactions
    are serialized already (BEGIN IMMEDIATE)."""
    dialects.of(conn).lock_scope(conn, f"cronplane-quota/{tenant}")


def count_schedules(conn: Connection, tenant: str, *, cap: int | None = None) -> int:
    """The tenant's schedule rows, counting no further than `cap`."""
    query = select(literal(1)).where(schedules.c.tenant == tenant)
    return _count(conn, query, cap)


def count_jobs(conn: Connection, tenant: str, *, cap: int | None = None) -> int:
    """The tenant's job rows (active or not), counting no further than `cap`."""
    return _count(conn, select(literal(1)).where(jobs.c.tenant == tenant), cap)


# What `max_queued` counts: items waiting to run.
QUEUED = (queue_items.c.status == "queued",)


def fired_since(since: datetime) -> tuple[Any, ...]:
    """What `max_fires_per_minute` and "fires in the last hour" count: the items the
    dispatcher enqueued (not manual runs) created at or after `since`."""
    return (queue_items.c.created_at >= since, queue_items.c.source == "schedule")


def count_queued(conn: Connection, tenant: str, *, cap: int | None = None) -> int:
    """The tenant's items waiting to run (`queued`), counting no further than `cap`."""
    query = select(literal(1)).where(queue_items.c.tenant == tenant, *QUEUED)
    return _count(conn, query, cap)


def count_fires(conn: Connection, tenant: str, since: datetime, *, cap: int | None = None) -> int:
    """The tenant's scheduled fires (items the dispatcher enqueued) created at or after
    `since`, counting no further than `cap`."""
    query = select(literal(1)).where(queue_items.c.tenant == tenant, *fired_since(since))
    return _count(conn, query, cap)


def _count(conn: Connection, query: Any, cap: int | None) -> int:
    inner = (query if cap is None else query.limit(cap)).subquery()
    return int(conn.execute(select(func.count()).select_from(inner)).scalar_one())


def known_tenants(conn: Connection) -> list[str]:
    """Every tenant with a schedule, a job or a quota row, sorted."""
    query = union(
        select(schedules.c.tenant).distinct(),
        select(jobs.c.tenant).distinct(),
        select(tenant_quotas.c.tenant),
    )
    return sorted({row[0] for row in conn.execute(query)})


def tenant_counts(
    conn: Connection, column: Any, tenants: Iterable[str], *where: Any
) -> Mapping[str, int]:
    """Rows per tenant of the table `column` belongs to (its tenant column), matching `where`."""
    query = (
        select(column, func.count())
        .where(column.in_(sorted(set(tenants))), *where)
        .group_by(column)
    )
    return {row[0]: int(row[1]) for row in conn.execute(query)}
