"""What the console shows of a schedule's runs: its newest item, whether it ever fired."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from sqlalchemy import Connection, and_, func, select, union

from cronplane.core.model import QueueItem
from cronplane.store.filing import schedule_in
from cronplane.store.queue import item_from_row
from cronplane.store.tables import events, queue_items


def latest_by_schedule(
    conn: Connection, tenant: str, schedule_ids: Sequence[UUID]
) -> dict[UUID, QueueItem]:
    """Each schedule's newest item (the console's "last outcome"), in one query."""
    if not schedule_ids:
        return {}
    newest = (
        select(queue_items.c.schedule_id, func.max(queue_items.c.created_at).label("at"))
        .where(queue_items.c.tenant == tenant, schedule_in(queue_items, schedule_ids))
        .group_by(queue_items.c.schedule_id)
        .subquery()
    )
    query = select(queue_items).join(
        newest,
        and_(
            queue_items.c.schedule_id == newest.c.schedule_id,
            queue_items.c.created_at == newest.c.at,
        ),
    )
    latest: dict[UUID, QueueItem] = {}
    for row in conn.execute(query):
        item = item_from_row(row)
        assert item.schedule_id is not None
        kept = latest.get(item.schedule_id)
        if kept is None or item.id > kept.id:  # same instant: the later UUIDv7
            latest[item.schedule_id] = item
    return latest


def recent_by_schedule(
    conn: Connection, tenant: str, schedule_ids: Sequence[UUID], per_schedule: int
) -> dict[UUID, list[QueueItem]]:
    """Each schedule's newest `per_schedule` items (any source), oldest first, in one
    query: the listing's sparkline of recent outcomes."""
    if not schedule_ids:
        return {}
    rank = (
        func.row_number()
        .over(
            partition_by=queue_items.c.schedule_id,
            order_by=(queue_items.c.created_at.desc(), queue_items.c.id.desc()),
        )
        .label("rank")
    )
    ranked = (
        select(queue_items, rank)
        .where(queue_items.c.tenant == tenant, schedule_in(queue_items, schedule_ids))
        .subquery()
    )
    query = select(*(ranked.c[column.name] for column in queue_items.c)).where(
        ranked.c.rank <= per_schedule
    )
    recent: dict[UUID, list[QueueItem]] = {}
    for row in conn.execute(query):
        item = item_from_row(row)
        assert item.schedule_id is not None
        recent.setdefault(item.schedule_id, []).append(item)
    for items in recent.values():
        items.sort(key=lambda item: (item.created_at, item.id))
    return recent


def fired_schedules(
    conn: Connection, tenant: str, schedule_ids: Sequence[UUID], fired_code: str
) -> set[UUID]:
    """The schedules among `schedule_ids` that ever fired: a `schedule` item or a fired event."""
    if not schedule_ids:
        return set()
    by_item = select(queue_items.c.schedule_id).where(
        queue_items.c.tenant == tenant,
        queue_items.c.source == "schedule",
        schedule_in(queue_items, schedule_ids),
    )
    by_event = select(events.c.schedule_id).where(
        events.c.tenant == tenant,
        events.c.code == fired_code,
        schedule_in(events, schedule_ids),
    )
    return {row[0] for row in conn.execute(union(by_item, by_event)) if row[0] is not None}
