"""The worker's grouped writes: successes, given-back claims, and their events.

Successes are one UPDATE … RETURNING per group, conditional on the lease
(`lease_owner`, status `running`): an item recovered meanwhile records
nothing. A batch of outcomes appends one event per item. Through Core's executemany
that was the largest share of a batch's time on PostgreSQL (a round trip
per row); here the rows are encoded once (`Dialect.row_encoder`) and go out
as one multi-row INSERT on SQLite or one COPY on PostgreSQL, the way the
dispatcher writes its ledger (store.dispatch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, String, Uuid, bindparam, literal_column, update

from cronplane.store import dialects
from cronplane.store.dispatch.transaction import EVENT_COLUMNS
from cronplane.store.tables import events, queue_items
from cronplane.store.types import JSONDocument, UTCDateTime

# How each column of EVENT_COLUMNS is encoded (an Encoder / RowText attribute).
_KINDS = (
    "text", "text", "text", "text", "uuid", "text", "uuid",
    "text", "text", "datetime", "datetime", "datetime", "json",
)  # fmt: skip


_NOW = bindparam("now", type_=UTCDateTime())
_OURS = (
    queue_items.c.id.in_(bindparam("ids", type_=Uuid(), expanding=True))
    & (queue_items.c.lease_owner == bindparam("worker", type_=String()))
    & (queue_items.c.status == literal_column("'running'"))
)
_RELEASED = {"lease_owner": None, "lease_expires_at": None, "updated_at": _NOW}
_SUCCEED = (
    update(queue_items)
    .where(_OURS)
    .values(status="succeeded", error=None, result=None, finished_at=_NOW, **_RELEASED)
    .returning(queue_items.c.id)
)
_RESULT = (
    update(queue_items)
    .where(queue_items.c.id == bindparam("item", type_=Uuid()))
    .values(result=bindparam("result", type_=JSONDocument))
)
_RELEASE = (
    update(queue_items)
    .where(_OURS)
    .values(status="queued", attempts=queue_items.c.attempts - 1, **_RELEASED)
)


def succeed_many(
    conn: Connection, results: Sequence[tuple[UUID, Any]], worker: str, now: datetime
) -> set[UUID]:
    """Record successes (item id, result); the ids recorded (those still ours).

    One UPDATE for the group, then one executemany for the results that are
    not None, on rows this transaction has just made `succeeded`.
    """
    if not results:
        return set()
    params = {"ids": [item_id for item_id, _ in results], "worker": worker, "now": now}
    done = set(conn.execute(_SUCCEED, params).scalars())
    values = [{"item": i, "result": r} for i, r in results if r is not None and i in done]
    if values:
        conn.execute(_RESULT, values)
    return done


def release(conn: Connection, item_ids: Sequence[UUID], worker: str, now: datetime) -> int:
    """Give back claimed items that never started (a stopping worker): queued, attempt undone."""
    if not item_ids:
        return 0
    done = conn.execute(_RELEASE, {"ids": list(item_ids), "worker": worker, "now": now})
    return int(done.rowcount)


def _empty_or(encode: Callable[[Any], Any], empty: Any) -> Callable[[Any], Any]:
    return lambda value: empty if not value else encode(value)


def append_outcome_events(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append events made by `store.events.event_values` in one bulk statement."""
    if not rows:
        return
    dialect = dialects.of(conn)
    enc = dialect.row_encoder
    converters = [getattr(enc, kind) for kind in _KINDS]
    converters[-1] = _empty_or(enc.json, enc.json({}))  # most details are {}: encoded once
    null = enc.null
    encoded = [
        tuple(
            null if row[column] is None else convert(row[column])
            for column, convert in zip(EVENT_COLUMNS, converters, strict=True)
        )
        for row in rows
    ]
    dialect.insert_rows(conn, events, EVENT_COLUMNS, encoded)
