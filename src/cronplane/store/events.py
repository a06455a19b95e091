"""The events table: append-only audit rows and the occurrence ledger."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final
from uuid import UUID

from sqlalchemy import ColumnElement, Connection, Row, Select, func, insert, select, union_all

from cronplane.codes import Code
from cronplane.events import Event
from cronplane.store.tables import events, queue_items


def event_values(
    code: Code,
    *,
    tenant: str,
    actor: str,
    message: str,
    now: datetime,
    stack: str | None = None,
    environment: str | None = None,
    schedule_id: UUID | None = None,
    schedule_name: str | None = None,
    item_id: UUID | None = None,
    scheduled_for: datetime | None = None,
    fired_at: datetime | None = None,
    detail: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One event row's values (for `append_events` batches)."""
    if code.kind != "event":
        raise ValueError(f"{code.text} is not an event code")
    return {
        "code": code.text,
        "tenant": tenant,
        "stack": stack,
        "environment": environment,
        "schedule_id": schedule_id,
        "schedule_name": schedule_name,
        "item_id": item_id,
        "actor": actor,
        "message": message,
        "scheduled_for": scheduled_for,
        "fired_at": fired_at,
        "created_at": now,
        "detail": dict(detail or {}),
    }


def append_events(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append many events in one statement (a batch of fires shares one)."""
    if rows:
        conn.execute(insert(events), [dict(row) for row in rows])


def append_event(conn: Connection, code: Code, **values: Any) -> None:
    """Append one event; keyword arguments as `event_values`."""
    append_events(conn, [event_values(code, **values)])


def event_from_row(row: Row[Any]) -> Event:
    """Map a row of `events` to the frozen Event record."""
    m = row._mapping
    return Event(
        id=m["id"],
        code=m["code"],
        tenant=m["tenant"],
        stack=m["stack"],
        environment=m["environment"],
        schedule_id=m["schedule_id"],
        schedule_name=m["schedule_name"],
        item_id=m["item_id"],
        actor=m["actor"],
        message=m["message"],
        scheduled_for=m["scheduled_for"],
        fired_at=m["fired_at"],
        created_at=m["created_at"],
        detail=dict(m["detail"] or {}),
    )


def list_events(
    conn: Connection,
    *,
    tenant: str | None,
    schedule_id: UUID | None = None,
    codes: Iterable[str] | None = None,
    before_id: int | None = None,
    limit: int = 100,
) -> list[Event]:
    """Events newest first, filtered; `before_id` pages backwards (keyset)."""
    where: list[ColumnElement[bool]] = []
    if tenant is not None:
        where.append(events.c.tenant == tenant)
    if codes is not None:
        where.append(events.c.code.in_(list(codes)))
    if before_id is not None:
        where.append(events.c.id < before_id)
    query: Select[Any]
    if schedule_id is None:
        query = select(events).where(*where).order_by(events.c.id.desc()).limit(limit)
    else:
        # Each section of ix_events_schedule newest first (store.filing), then
        # the newest of both: never a sort of the schedule's whole ledger.
        sections = [
            select(events)
            .where(*where, events.c.filed == filed, events.c.schedule_id == schedule_id)
            .order_by(events.c.id.desc())
            .limit(limit)
            .subquery()
            for filed in (False, True)
        ]
        both = union_all(*(select(section) for section in sections)).subquery()
        query = select(both).order_by(both.c.id.desc()).limit(limit)
    return [event_from_row(row) for row in conn.execute(query)]


# What the alert pass reads of an event (not its detail: no JSON to decode per event).
LEDGER_COLUMNS: tuple[Any, ...] = (
    events.c.id,
    events.c.code,
    events.c.tenant,
    events.c.schedule_id,
    events.c.item_id,
    events.c.scheduled_for,
    events.c.created_at,
    events.c.message,
)


def last_event_id(conn: Connection) -> int:
    """The newest event's id (0: none yet)."""
    return int(conn.execute(select(func.max(events.c.id))).scalar() or 0)


def ledger_after(conn: Connection, cursor: int, limit: int) -> list[Row[Any]]:
    """Up to `limit` events after id `cursor`, oldest first (LEDGER_COLUMNS)."""
    query = select(*LEDGER_COLUMNS).where(events.c.id > cursor).order_by(events.c.id).limit(limit)
    return list(conn.execute(query))


def _item_events(tenant: str, item_id: UUID, schedule_id: UUID | None) -> list[ColumnElement[bool]]:
    """What selects one item's events: through its schedule's index when it has one (the
    events table has no index of items, so a manual item without one reads the tenant's)."""
    where = [events.c.tenant == tenant, events.c.item_id == item_id]
    if schedule_id is not None:
        where.append(events.c.schedule_id == schedule_id)
    return where


def of_item(
    conn: Connection, tenant: str, item_id: UUID, schedule_id: UUID | None, limit: int = 200
) -> list[Event]:
    """One item's events, oldest first."""
    where = _item_events(tenant, item_id, schedule_id)
    query = select(events).where(*where).order_by(events.c.id).limit(limit)
    return [event_from_row(row) for row in conn.execute(query)]


def last_actor(
    conn: Connection, tenant: str, item_id: UUID, schedule_id: UUID | None, code: Code
) -> str | None:
    """Who wrote the item's latest event of `code`; None when it has none."""
    where = _item_events(tenant, item_id, schedule_id)
    query = select(events.c.actor).where(*where, events.c.code == code.text)
    actor = conn.execute(query.order_by(events.c.id.desc()).limit(1)).scalar()
    return None if actor is None else str(actor)


# Ids grow with time, but not strictly: a transaction's events carry its "now" and
# get their ids as it runs, and nodes' clocks differ. An export's window is found
# by id on the assumption that no event is recorded further out of time order than
# this (queue.prune assumes ids grow with time too); membership is still by time.
OUT_OF_ORDER: Final = timedelta(minutes=15)


def _first_from(conn: Connection, tenant: str, start: int) -> Row[Any, Any] | None:
    query = (
        select(events.c.id, events.c.created_at)
        .where(events.c.tenant == tenant, events.c.id >= start)
        .order_by(events.c.id)
        .limit(1)
    )
    return conn.execute(query).first()


def first_id_at(conn: Connection, tenant: str, at: datetime, low: int) -> int:
    """The least id >= `low` from which the tenant's events were recorded at `at` or
    later (every id below it earlier), as ids grow with time: bisected over
    ix_events_tenant in O(log n) reads of one row each (events keep no index on
    created_at). Past the tenant's last event when all are older."""
    first = _first_from(conn, tenant, low)
    if first is None or first.created_at >= at:
        return low
    newest = (
        select(events.c.id, events.c.created_at)
        .where(events.c.tenant == tenant)
        .order_by(events.c.id.desc())
        .limit(1)
    )
    last = conn.execute(newest).first()
    if last is None:  # pruned meanwhile
        return low
    if last.created_at < at:
        return int(last.id) + 1
    lo, hi = int(first.id) + 1, int(last.id)  # the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        row = _first_from(conn, tenant, mid)
        if row is None or row.created_at >= at:
            hi = mid
        else:  # every id in [mid, row.id] starts at this row, recorded before `at`
            lo = int(row.id) + 1
    return lo


def export_rows(
    conn: Connection,
    *,
    tenant: str,
    low: int,
    high: int | None,
    since: datetime | None,
    until: datetime | None,
    codes: Iterable[str] | None,
    limit: int,
) -> list[tuple[Event, str | None]]:
    """Up to `limit` of the tenant's events with `low <= id < high`, recorded in
    [since, until) and of `codes`, oldest first (ix_events_tenant), each with the job
    its item ran while the item is kept (its primary key)."""
    where: list[ColumnElement[bool]] = [events.c.tenant == tenant, events.c.id >= low]
    if high is not None:
        where.append(events.c.id < high)
    if since is not None:
        where.append(events.c.created_at >= since)
    if until is not None:
        where.append(events.c.created_at < until)
    if codes is not None:
        where.append(events.c.code.in_(sorted(codes)))
    joined = events.outerjoin(queue_items, queue_items.c.id == events.c.item_id)
    query = (
        select(events, queue_items.c.job.label("item_job"))
        .select_from(joined)
        .where(*where)
        .order_by(events.c.id)
        .limit(limit)
    )
    return [(event_from_row(row), row._mapping["item_job"]) for row in conn.execute(query)]
