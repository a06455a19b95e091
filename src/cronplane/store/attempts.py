"""The item_attempts table: one row per attempt that reached an outcome.

Written by the worker's recorder in the transaction that records the outcome
(so a row exists exactly when the item's outcome was written), read oldest
first for one item by `cronplane queue logs` and the console's run page,
deleted with their items (store.queue.prune).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, insert, select

from cronplane.core.attempts import Attempt
from cronplane.ids import time_ordered_id
from cronplane.store.tables import item_attempts


def attempt_values(attempt: Attempt) -> dict[str, Any]:
    """The row of one attempt (its id ordered by when it ended)."""
    return {
        "id": time_ordered_id(attempt.finished_at),
        "item_id": attempt.item_id,
        "attempt": attempt.attempt,
        "outcome": attempt.outcome,
        "worker": attempt.worker,
        "started_at": attempt.started_at,
        "finished_at": attempt.finished_at,
        "error": attempt.error,
        "output": attempt.output,
    }


def add(conn: Connection, attempts: Sequence[Attempt]) -> None:
    """Insert attempts (one executemany)."""
    if attempts:
        conn.execute(insert(item_attempts), [attempt_values(a) for a in attempts])


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
