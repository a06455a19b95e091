"""Cancelling queue items: a waiting item at once, a running one by request.

A queued item is cancelled in place (status `cancelled`). A running item is
*asked* to stop: `cancel_requested_at` and `cancelled_by` are set, and the
worker that holds it learns it through its watch (heartbeat.py), stops the
run and records `cancelled` itself (`finish_cancelled`, conditional on its
lease like every outcome). Both leave a ledger event with the actor.

The dispatcher's `cancel_running` overlap uses `cancel_schedules` inside the
fire transaction, before the new item is inserted, so the new item is never
touched by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, String, func, literal, select, update

from cronplane import events as ev
from cronplane.core.model import QueueItem
from cronplane.store import queue
from cronplane.store.events import append_events, event_values
from cronplane.store.filing import schedule_in
from cronplane.store.tables import queue_items


def _event(item: QueueItem, *, actor: str, now: datetime, requested: bool) -> dict[str, Any]:
    code = ev.ITEM_CANCEL_REQUESTED if requested else ev.ITEM_CANCELLED
    verb = "asked to stop" if requested else "cancelled"
    return event_values(
        code,
        tenant=item.tenant,
        stack=item.stack,
        environment=item.environment,
        schedule_id=item.schedule_id,
        item_id=item.id,
        scheduled_for=item.scheduled_for,
        actor=actor,
        message=f"{item.job} {verb} by {actor}",
        now=now,
        detail={"cancelled_by": actor, "was": "running" if requested else "queued"},
    )


def cancel_or_request(
    conn: Connection, item: QueueItem, *, actor: str, now: datetime
) -> QueueItem | None:
    """Cancel `item` if queued, ask it to stop if running; None when it is neither any more."""
    changed = _cancel_where(conn, queue_items.c.id == item.id, actor=actor, now=now)
    return changed[0] if changed else None


def cancel_schedules(
    conn: Connection, schedule_ids: Sequence[UUID | str], *, actor: str, now: datetime
) -> list[QueueItem]:
    """`cancel_running`: cancel the schedules' waiting items, ask their running ones to stop."""
    if not schedule_ids:
        return []
    ids = [sid if isinstance(sid, UUID) else UUID(sid) for sid in schedule_ids]
    return _cancel_where(conn, schedule_in(queue_items, ids), actor=actor, now=now)


def _cancel_where(conn: Connection, where: Any, *, actor: str, now: datetime) -> list[QueueItem]:
    cancelled = conn.execute(
        update(queue_items)
        .where(where, queue_items.c.status == "queued")
        .values(status="cancelled", cancelled_by=actor, finished_at=now, updated_at=now)
        .returning(*queue_items.c)
    ).all()
    # A request already made stands (its first actor is kept).
    requested = conn.execute(
        update(queue_items)
        .where(
            where,
            queue_items.c.status == "running",
            queue_items.c.cancel_requested_at.is_(None),
        )
        .values(cancel_requested_at=now, cancelled_by=actor, updated_at=now)
        .returning(*queue_items.c)
    ).all()
    items = [queue.item_from_row(row) for row in (*cancelled, *requested)]
    append_events(
        conn,
        [_event(i, actor=actor, now=now, requested=i.status == "running") for i in items],
    )
    return items


def asked_of(conn: Connection, worker: str) -> set[UUID]:
    """The worker's running items (claimed, or started) asked to stop: one read answers
    for all of them, just before a start and in the heartbeat's watch (ix_queue_items_asked)."""
    rows = conn.execute(
        select(queue_items.c.id).where(
            queue_items.c.lease_owner == worker,
            queue_items.c.status == "running",
            queue_items.c.cancel_requested_at.is_not(None),
        )
    ).scalars()
    return set(rows)


def held(conn: Connection, item_ids: Sequence[UUID], worker: str) -> tuple[set[UUID], set[UUID]]:
    """Of these items, those still ours (running under our lease), and of those the ones
    asked to stop: what a worker checks just before it starts claimed items."""
    if not item_ids:
        return set(), set()
    rows = conn.execute(
        select(queue_items.c.id, queue_items.c.cancel_requested_at.is_not(None)).where(
            queue_items.c.id.in_(list(item_ids)),
            queue_items.c.lease_owner == worker,
            queue_items.c.status == "running",
        )
    ).all()
    return {row[0] for row in rows}, {row[0] for row in rows if row[1]}


def finish_cancelled(
    conn: Connection,
    item: QueueItem,
    worker: str,
    now: datetime,
    *,
    ran: tuple[datetime, datetime] | None = None,
    note: str = "",
) -> str | None:
    """The worker stopped a run it was asked to stop (`ran`: when it was invoked and ended),
    or never started it (`ran` None): `cancelled`, and by whom; None when no longer ours.

    `note` ends the recorded error (a thread pool's run that went on to its end says when)."""
    verb = "cancelled while running, by " if ran is not None else "cancelled before it started, by "
    values: dict[str, Any] = {
        "status": "cancelled",
        "error": literal(verb, String)
        + func.coalesce(queue_items.c.cancelled_by, literal("an operator", String))
        + literal(note, String),
        "lease_owner": None,
        "lease_expires_at": None,
        "finished_at": now if ran is None else ran[1],
        "updated_at": now,
    }
    # Never started: no start is recorded for this attempt.
    values["started_at"] = None if ran is None else ran[0]
    done = conn.execute(
        update(queue_items)
        .where(
            queue_items.c.id == item.id,
            queue_items.c.lease_owner == worker,
            queue_items.c.status == "running",
        )
        .values(values)
        .returning(queue_items.c.cancelled_by)
    ).first()
    return None if done is None else str(done[0] or "an operator")
