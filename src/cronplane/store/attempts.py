"""The item_attempts table: one row per attempt that reached an outcome.

Written by the worker's recorder in the transaction that records the outcome
(so a row exists exactly when the item's outcome was written), read oldest
first for one item by `cronplane queue logs` and the console's run page,
deleted with their items (store.queue.prune).
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from sqlalchemy import Connection, select

from cronplane.core.attempts import Attempt
from cronplane.ids import time_ordered_hexes
from cronplane.store import dialects
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


def of_item(conn: Connection, item_id: UUID) -> list[Attempt]:
    """One item's attempts, oldest first."""
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
