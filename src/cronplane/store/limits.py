"""Claims under limits: a job's `max_concurrency`, a tenant's limit, exclusive items.

Most items carry no limit and are claimed by `claims.claim_batch`'s single
UPDATE, which leaves limited items alone. An item is *limited* when it
carries `max_concurrency` (its job's option when it was enqueued), when it
is `exclusive` (overlap `buffer_one`/`cancel_running`: it waits while
another item of its schedule runs), or, for a worker given a per-tenant
limit (`CRONPLANE_TENANT_MAX_CONCURRENCY`), always.

A limited claim counts what runs, so two of them must not count at once:
they are serialized (`lock_scope`: a transaction-level advisory lock on
PostgreSQL; SQLite's BEGIN IMMEDIATE already serializes writers). Inside
the lock it reads the first `SCAN_FACTOR × limit` waiting limited items in
the claim's order, counts the running items of their jobs, tenants and
schedules, and takes, in turns by tenant (each tenant's first, then each
one's second, …, as `claims.claim_batch`), those that fit; the rest wait.
Finishing never needs the lock: it only lowers the counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, or_, select, update

from cronplane.core.model import QueueItem
from cronplane.store import claims, dialects, item_rows
from cronplane.store.filing import schedule_in
from cronplane.store.tables import queue_items

# A limited claim looks this many times its batch size ahead (at least
# MIN_SCAN items), so one saturated job at the head does not starve the rest.
SCAN_FACTOR = 8
MIN_SCAN = 256
LOCK_KEY = "cronplane:limited-claims"


def claim(
    conn: Connection,
    worker: str,
    now: datetime,
    lease: timedelta,
    limit: int,
    *,
    tenant_limit: int | None = None,
    fair: bool = True,
) -> list[QueueItem]:
    """Up to `limit` items for `worker`: unlimited ones first (one UPDATE), then limited ones.

    `fair`: the unlimited ones in turns by tenant (claims.claim_batch).
    """
    found: list[QueueItem] = []
    if tenant_limit is None:
        found = claims.claim_batch(conn, worker, now, lease, limit, fair=fair)
    if len(found) < limit:
        found += claim_limited(conn, worker, now, lease, limit - len(found), tenant_limit)
    return found


def _waiting(now: datetime, tenant_limit: int | None) -> list[Any]:
    conditions = [
        queue_items.c.status == "queued",
        queue_items.c.available_at <= now,
        or_(queue_items.c.expires_at.is_(None), queue_items.c.expires_at > now),
    ]
    if tenant_limit is None:
        conditions.append(or_(queue_items.c.max_concurrency.is_not(None), queue_items.c.exclusive))
    return conditions


def claim_limited(
    conn: Connection,
    worker: str,
    now: datetime,
    lease: timedelta,
    limit: int,
    tenant_limit: int | None = None,
) -> list[QueueItem]:
    """Claim up to `limit` limited items, never past a job's, tenant's or schedule's limit."""
    dialect = dialects.of(conn)
    candidates = conn.execute(
        dialect.skip_locked(
            select(
                queue_items.c.id,
                queue_items.c.tenant,
                queue_items.c.stack,
                queue_items.c.job,
                queue_items.c.schedule_id,
                queue_items.c.max_concurrency,
                queue_items.c.exclusive,
            )
            .where(*_waiting(now, tenant_limit))
            .order_by(queue_items.c.priority.desc(), queue_items.c.available_at, queue_items.c.id)
            .limit(max(MIN_SCAN, SCAN_FACTOR * limit))
        )
    ).all()
    if not candidates:
        return []
    dialect.lock_scope(conn, LOCK_KEY)
    # Counted after the lock: every limited claim before ours has committed.
    jobs, tenants, schedules = _running(conn, candidates, tenant_limit is not None)
    chosen = []
    # In turns by tenant, as the unlimited claim (claims.claim_batch) takes
    # them; the sort is stable, so each turn keeps the claim's order.
    turns: Counter[str] = Counter()

    def turn(c: Any) -> int:
        turns[c.tenant] += 1
        return turns[c.tenant]

    for c in sorted(candidates, key=turn):
        job = (c.tenant, c.stack, c.job)
        if (
            (c.max_concurrency is not None and jobs[job] >= c.max_concurrency)
            or (tenant_limit is not None and tenants[c.tenant] >= tenant_limit)
            or (c.exclusive and c.schedule_id in schedules)
        ):
            continue
        chosen.append(c.id)
        jobs[job] += 1
        tenants[c.tenant] += 1
        if c.schedule_id is not None:
            schedules.add(c.schedule_id)
        if len(chosen) == limit:
            break
    if not chosen:
        return []
    rows = conn.execute(
        update(queue_items)
        .where(queue_items.c.id.in_(chosen), queue_items.c.status == "queued")
        .values(
            status="running",
            attempts=queue_items.c.attempts + 1,
            lease_owner=worker,
            heartbeat_at=now,
            lease_expires_at=now + lease,
            started_at=now,  # this attempt's start (see claims._claim_statement)
            updated_at=now,
        )
        .returning(*item_rows.COLUMNS)
    ).all()
    return claims.in_turns(dialects.of(conn).decode_items(rows))


def _running(
    conn: Connection, candidates: Sequence[Any], by_tenant: bool
) -> tuple[Counter[tuple[str, str, str]], Counter[str], set[Any]]:
    """What runs now: per job (of the candidates'), per tenant, and the busy schedules."""
    running = queue_items.c.status == "running"
    tenants_in = {c.tenant for c in candidates}
    jobs: Counter[tuple[str, str, str]] = Counter()
    limited = [c for c in candidates if c.max_concurrency is not None]
    if limited:
        for tenant, stack, job, count in conn.execute(
            select(queue_items.c.tenant, queue_items.c.stack, queue_items.c.job, func.count())
            .where(
                running,
                queue_items.c.tenant.in_({c.tenant for c in limited}),
                queue_items.c.job.in_({c.job for c in limited}),
            )
            .group_by(queue_items.c.tenant, queue_items.c.stack, queue_items.c.job)
        ):
            jobs[(tenant, stack, job)] = int(count)
    tenants: Counter[str] = Counter()
    if by_tenant:
        for tenant, count in conn.execute(
            select(queue_items.c.tenant, func.count())
            .where(running, queue_items.c.tenant.in_(tenants_in))
            .group_by(queue_items.c.tenant)
        ):
            tenants[tenant] = int(count)
    exclusive = {c.schedule_id for c in candidates if c.exclusive and c.schedule_id is not None}
    schedules: set[Any] = set()
    if exclusive:
        schedules = set(
            conn.execute(
                select(queue_items.c.schedule_id)
                .where(running, schedule_in(queue_items, exclusive))
                .distinct()
            ).scalars()
        )
    return jobs, tenants, schedules
