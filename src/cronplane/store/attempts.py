"""The item_attempts table: one row per attempt that reached an outcome, but a success
that ran and printed nothing (core.attempts.held_by_item: its item's row holds it).

Written by the worker's recorder in the transaction that records the outcome
(so a row exists exactly when the item's outcome was written), read oldest
first for one item by `cronplane queue logs` and the console's run page,
deleted with their items (store.queue.prune).
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from sqlalchemy import Connection, select

from cronplane import events as ev
from cronplane.core.attempts import Attempt, unwritten_success
from cronplane.core.model import QueueItem
from cronplane.ids import time_ordered_hexes
from cronplane.store import dialects, events
from cronplane.store.tables import item_attempts

# The columns as the bulk insert writes them.
_COLUMNS = (
    "id", "item_id", "attempt", "outcome", "worker", "started_at", "finished_at", "error",
    "output",
)  # fmt: skip


def add(conn: Connection, attempts: Sequence[Attempt]) -> None:
    """Insert attempts, encoded once by the dialect (one multi-row INSERT on SQLite, one
    COPY on PostgreSQL): through Core's executemany the binds of a thousand-item group
    cost 45 ms, a third of recording it. Ids ascend in the group's order, after the
    last one ended (an item's attempts are read in attempt order, then by id)."""
    if not attempts:
        return
    dialect = dialects.of(conn)
    enc = dialect.row_encoder
    uuid, when, text, null = enc.uuid, enc.datetime, enc.text, enc.null
    ids = time_ordered_hexes(max(a.finished_at for a in attempts), len(attempts))
    rows = [
        (
            uuid(attempt_id),
            uuid(a.item_id),
            enc.int(a.attempt),
            text(a.outcome),
            text(a.worker),
            null if a.started_at is None else when(a.started_at),
            when(a.finished_at),
            null if a.error is None else text(a.error),
            null if a.output is None else enc.json(a.output),
        )
        for attempt_id, a in zip(ids, attempts, strict=True)
    ]
    dialect.insert_rows(conn, item_attempts, _COLUMNS, rows)


def of_item(conn: Connection, item: QueueItem) -> list[Attempt]:
    """One item's attempts, oldest first: its rows, then a success held by the item's
    row alone, with its worker from the success event (written in the same transaction,
    pruned no earlier: its `created_at` is not before the item's `finished_at`)."""
    written = rows_of(conn, item.id)
    held = unwritten_success(item, written, lambda: _succeeded_by(conn, item))
    return written if held is None else [*written, held]


def _succeeded_by(conn: Connection, item: QueueItem) -> str:
    """The worker named by the item's success event ("" if that event is gone)."""
    actor = events.last_actor(conn, item.tenant, item.id, item.schedule_id, ev.ITEM_SUCCEEDED)
    return "" if actor is None else actor.removeprefix("worker:")


def rows_of(conn: Connection, item_id: UUID) -> list[Attempt]:
    """One item's attempt rows, oldest first."""
    rows = conn.execute(
        select(item_attempts)
        .where(item_attempts.c.item_id == item_id)
        .order_by(item_attempts.c.attempt, item_attempts.c.id)
    )
    return [
        Attempt(
            item_id=m["item_id"],
            attempt=m["attempt"],
            outcome=m["outcome"],
            worker=m["worker"],
            started_at=m["started_at"],
            finished_at=m["finished_at"],
            error=m["error"],
            output=m["output"],
        )
        for m in (row._mapping for row in rows)
    ]
