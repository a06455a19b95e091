"""The job queue, in the same database as the schedules (so a fire is atomic).

Item lifecycle (drawn in docs/architecture.md)::

    queued ──claim──▶ running ──finish──▶ succeeded
      ▲                 │ fail, attempts left: available_at = now + backoff
      └─────────────────┘
    running ──fail, no attempts left──▶ failed
    queued  ──expires_at passed──▶ expired      (sweep)
    running ──worker lease lost──▶ queued / failed  (sweep: recover)
    running ──released unstarted (stopping, expired in its batch)──▶ queued
    queued  ──cancel──▶ cancelled                 (store.cancels)
    running ──cancel requested, worker stops it──▶ cancelled
    running ──ran past its timeout, stopped──▶ queued (attempts left) / failed

Claiming never hands one item to two workers: on PostgreSQL the candidates
(up to a batch) are chosen with `FOR UPDATE SKIP LOCKED` inside a single
UPDATE … RETURNING; on SQLite the same UPDATE runs in a write transaction
(BEGIN IMMEDIATE), which serializes writers. The claim walks
`ix_queue_items_claim`, built in the claim's order, so its cost does not grow
with the queue. Finishing and heartbeats are conditional on our lease
(`lease_owner`, status `running`), so a worker whose items were recovered
records nothing. The worker's statements are built once (module constants)
and only their parameters change per call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Connection,
    Row,
    String,
    Uuid,
    bindparam,
    delete,
    func,
    literal_column,
    select,
    update,
)

from cronplane.core.items import ItemOptions
from cronplane.core.model import ACTIVE, FINISHED, QueueItem
from cronplane.ids import time_ordered_id
from cronplane.store import outcomes
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.filing import schedule_is
from cronplane.store.tables import events, item_attempts, queue_items
from cronplane.store.types import UTCDateTime

# A new item's defaults are core.items' (ItemOptions).
_DEFAULT = ItemOptions()


@lru_cache(maxsize=32)
def _picker(fields: tuple[str, ...]) -> Callable[[Row[Any]], tuple[Any, ...]]:
    """The record's fields, in its order, from a row of these columns."""
    return itemgetter(*(fields.index(name) for name in QueueItem.__slots__))


def item_from_row(row: Row[Any]) -> QueueItem:
    """Map a `queue_items` row to the frozen record (by position: a claim maps a
    thousand rows at a time, and a mapping per row cost a third of it)."""
    return QueueItem(*_picker(row._fields)(row))


def item_values(
    *,
    tenant: str,
    stack: str,
    environment: str,
    job: str,
    payload: dict[str, Any],
    source: str,
    now: datetime,
    schedule_id: UUID | None = None,
    scheduled_for: datetime | None = None,
    priority: int = _DEFAULT.priority,
    expires_at: datetime | None = None,
    max_attempts: int = _DEFAULT.max_attempts,
    item_id: UUID | None = None,
    timeout: float | None = None,
    max_concurrency: int | None = None,
    exclusive: bool = False,
) -> dict[str, Any]:
    """One new queued item's column values (for single or batched inserts).

    `priority`, `expires_at` and `max_attempts` default to core.items.ItemOptions'.
    """
    return {
        "id": item_id or time_ordered_id(now),
        "tenant": tenant,
        "stack": stack,
        "environment": environment,
        "job": job,
        "payload": payload,
        "source": source,
        "schedule_id": schedule_id,
        "scheduled_for": scheduled_for,
        "priority": priority,
        "status": "queued",
        "available_at": now,
        "expires_at": expires_at if expires_at is not None else _DEFAULT.expires_at(now),
        "attempts": 0,
        "max_attempts": max_attempts,
        "lease_owner": None,
        "heartbeat_at": None,
        "lease_expires_at": None,
        "result": None,
        "error": None,
        "created_at": now,
        "started_at": None,
        "finished_at": None,
        "updated_at": now,
        "timeout": timeout,
        "max_concurrency": max_concurrency,
        "exclusive": exclusive,
        "cancel_requested_at": None,
        "cancelled_by": None,
    }


def enqueue(conn: Connection, values: dict[str, Any]) -> UUID:
    """Insert one item (values from `item_values`); return its id."""
    conn.execute(queue_items.insert(), [values])
    item_id: UUID = values["id"]
    return item_id


def enqueue_many(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Insert items (values from `item_values`) in one bulk statement (store.bulk_rows)."""
    insert_dicts(conn, queue_items, rows)


def first_active(conn: Connection, schedule_id: UUID) -> QueueItem | None:
    """One queued or running item of the schedule, if any."""
    row = conn.execute(
        select(queue_items)
        .where(schedule_is(queue_items, schedule_id), queue_items.c.status.in_(ACTIVE))
        .limit(1)
    ).first()
    return item_from_row(row) if row is not None else None


def fired_at(conn: Connection, schedule_id: UUID, occurrences: Sequence[datetime]) -> set[datetime]:
    """Of these occurrences of the schedule, those that already have an item."""
    if not occurrences:
        return set()
    query = select(queue_items.c.scheduled_for).where(
        queue_items.c.schedule_id == schedule_id,
        queue_items.c.scheduled_for.in_(list(occurrences)),
    )
    return {at for (at,) in conn.execute(query)}


def get(conn: Connection, item_id: UUID, tenant: str | None = None) -> QueueItem | None:
    """One item by id (within `tenant` when given)."""
    query = select(queue_items).where(queue_items.c.id == item_id)
    if tenant is not None:
        query = query.where(queue_items.c.tenant == tenant)
    row = conn.execute(query).first()
    return item_from_row(row) if row is not None else None


def list_items(
    conn: Connection,
    *,
    tenant: str | None,
    status: str | None = None,
    schedule_id: UUID | None = None,
    limit: int = 100,
) -> list[QueueItem]:
    """Items newest first, filtered."""
    query = select(queue_items).order_by(queue_items.c.created_at.desc()).limit(limit)
    if tenant is not None:
        query = query.where(queue_items.c.tenant == tenant)
    if status is not None:
        query = query.where(queue_items.c.status == status)
    if schedule_id is not None:
        query = query.where(schedule_is(queue_items, schedule_id))
    return [item_from_row(row) for row in conn.execute(query)]


# -- the worker's hot path: statements built once, parameters bound per call ---------

_NOW = bindparam("now", type_=UTCDateTime())
_WORKER = bindparam("worker", type_=String())
_IDS = bindparam("ids", type_=Uuid(), expanding=True)
# A literal, not a parameter: SQLite uses a partial index only when the query's
# WHERE names the index's own `status = 'queued'`.
_QUEUED = queue_items.c.status == literal_column("'queued'")
_OURS = (
    queue_items.c.id.in_(_IDS)
    & (queue_items.c.lease_owner == _WORKER)
    & (queue_items.c.status == literal_column("'running'"))
)


_HEARTBEAT = (
    update(queue_items)
    .where(_OURS)
    .values(
        heartbeat_at=_NOW,
        lease_expires_at=bindparam("until", type_=UTCDateTime()),
        updated_at=_NOW,
    )
    .returning(queue_items.c.id)
)


def claim(conn: Connection, worker: str, now: datetime, lease: timedelta) -> QueueItem | None:
    """Take the next available item (highest priority, oldest first) for `worker`."""
    from cronplane.store import limits  # limits builds on this module

    # One item: the first of the claim's order either way (in turns, each
    # tenant's first item competes by priority and age), so the cheaper statement.
    found = limits.claim(conn, worker, now, lease, 1, fair=False)
    return found[0] if found else None


def heartbeat_many(
    conn: Connection, item_ids: Sequence[UUID], worker: str, now: datetime, lease: timedelta
) -> set[UUID]:
    """Extend our lease on running items; the ids that are still ours."""
    if not item_ids:
        return set()
    params = {"ids": list(item_ids), "worker": worker, "now": now, "until": now + lease}
    return set(conn.execute(_HEARTBEAT, params).scalars())


def heartbeat(
    conn: Connection, item_id: UUID, worker: str, now: datetime, lease: timedelta
) -> bool:
    """Extend our lease on a running item; False when it is no longer ours."""
    return bool(heartbeat_many(conn, [item_id], worker, now, lease))


def succeed(conn: Connection, item_id: UUID, worker: str, now: datetime, result: Any) -> bool:
    """Record success; False when the item is no longer ours."""
    return bool(
        outcomes.succeed_many(conn, [outcomes.Success(item_id, result, None, now)], worker, now)
    )


def _ours(item_id: UUID, worker: str) -> Any:
    return (
        (queue_items.c.id == item_id)
        & (queue_items.c.lease_owner == worker)
        & (queue_items.c.status == "running")
    )


def fail(
    conn: Connection,
    item_id: UUID,
    worker: str,
    now: datetime,
    error: str,
    retry_at: datetime | None,
    *,
    ran: tuple[datetime, datetime] | None = None,
) -> bool:
    """Record a failure: back to queued at `retry_at`, or failed when None.

    `ran`: when the target was invoked and when it returned (the worker's
    readings); without it the attempt's claim time stands and it ended `now`.
    """
    values: dict[str, Any] = {
        "error": error,
        "lease_owner": None,
        "lease_expires_at": None,
        "updated_at": now,
    }
    if ran is not None:
        values["started_at"] = ran[0]
    ours = _ours(item_id, worker)
    if retry_at is None:
        values |= {"status": "failed", "finished_at": now if ran is None else ran[1]}
    else:
        values |= {"status": "queued", "available_at": retry_at}
        # An item asked to stop is not retried (the worker records it cancelled).
        ours = ours & queue_items.c.cancel_requested_at.is_(None)
    done = conn.execute(update(queue_items).where(ours).values(values))
    return done.rowcount == 1


def expire_stale(conn: Connection, now: datetime, limit: int = 1000) -> list[QueueItem]:
    """Mark queued items past `expires_at` as expired; return them (for events)."""
    ids = select(queue_items.c.id).where(
        queue_items.c.status == "queued", queue_items.c.expires_at <= now
    )
    rows = conn.execute(
        update(queue_items)
        .where(queue_items.c.id.in_(ids.limit(limit).scalar_subquery()))
        .values(status="expired", finished_at=now, updated_at=now)
        .returning(*queue_items.c)
    ).all()
    return [item_from_row(row) for row in rows]


def recover_abandoned(conn: Connection, now: datetime, limit: int = 1000) -> int:
    """Requeue running items whose worker lease lapsed (the worker died).

    An item with attempts left goes back to queued; one without becomes failed.
    """
    lapsed = (
        (queue_items.c.status == "running")
        & (queue_items.c.lease_expires_at.is_not(None))
        & (queue_items.c.lease_expires_at <= now)
    )
    common = {"lease_owner": None, "lease_expires_at": None, "updated_at": now}
    # An item asked to stop whose worker died is not run again.
    cancelled = conn.execute(
        update(queue_items)
        .where(lapsed, queue_items.c.cancel_requested_at.is_not(None))
        .values(status="cancelled", finished_at=now, error="worker lease lapsed", **common)
    ).rowcount
    requeued = conn.execute(
        update(queue_items)
        .where(lapsed, queue_items.c.attempts < queue_items.c.max_attempts)
        .values(status="queued", available_at=now, error="worker lease lapsed", **common)
    ).rowcount
    failed = conn.execute(
        update(queue_items)
        .where(lapsed)
        .values(status="failed", finished_at=now, error="worker lease lapsed", **common)
    ).rowcount
    return int(cancelled) + int(requeued) + int(failed)


def count_active(conn: Connection) -> dict[str, int]:
    """How many items are in each active status (every one of ACTIVE, zero included)."""
    counts = dict.fromkeys(ACTIVE, 0)
    found = conn.execute(
        select(queue_items.c.status, func.count())
        .where(queue_items.c.status.in_(ACTIVE))
        .group_by(queue_items.c.status)
    )
    counts.update({status: int(count) for status, count in found})
    return counts


def prune(conn: Connection, before: datetime) -> tuple[int, int]:
    """Delete finished items (with their attempts) and events older than `before`; return
    (items, events).

    Events go by id range, with no index on `created_at`: ids grow with time,
    so the old events are the oldest ids, up to the first event that is not
    old yet. Finding that one walks the primary key from the start and passes
    only rows about to be deleted. An event written out of time order (older
    `created_at` than an event before it) waits for a later prune.
    """
    old_items = (queue_items.c.status.in_(FINISHED), queue_items.c.finished_at < before)
    # Their attempts first (item_attempts, found by its item index).
    conn.execute(
        delete(item_attempts).where(
            item_attempts.c.item_id.in_(select(queue_items.c.id).where(*old_items))
        )
    )
    items = conn.execute(delete(queue_items).where(*old_items)).rowcount
    first_kept = conn.execute(
        select(events.c.id).where(events.c.created_at >= before).order_by(events.c.id).limit(1)
    ).scalar()
    # created_at is still checked: an id below the bound may belong to a
    # transaction that committed after the lookup, with a fresh event.
    old = delete(events).where(events.c.created_at < before)
    if first_kept is not None:
        old = old.where(events.c.id < first_kept)
    old_events = conn.execute(old).rowcount
    return int(items), int(old_events)
