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
from dataclasses import dataclass
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
_RESULT = (
    update(queue_items)
    .where(queue_items.c.id == bindparam("item", type_=Uuid()))
    .values(result=bindparam("result", type_=JSONDocument))
)
# A claim given back before it started: queued again with its attempt undone,
# unless it was asked to stop meanwhile (then `cancel_unstarted` takes it).
_RELEASE = (
    update(queue_items)
    .where(_OURS, queue_items.c.cancel_requested_at.is_(None))
    .values(status="queued", attempts=queue_items.c.attempts - 1, started_at=None, **_RELEASED)
)


@dataclass(frozen=True, slots=True)
class Success:
    """One item's success as the worker saw it: its result, when it was invoked and ended."""

    item_id: UUID
    result: Any
    started: datetime | None  # None: the claim's time stands
    finished: datetime


# The group's status change: one constant statement (compiled once); each
# item's own instants follow as two bulk updates (see succeed_many).
_SUCCEED = (
    update(queue_items)
    .where(_OURS)
    .values(status="succeeded", error=None, result=None, **_RELEASED)
    .returning(queue_items.c.id)
)


def succeed_many(
    conn: Connection, results: Sequence[Success], worker: str, now: datetime
) -> set[UUID]:
    """Record successes; the ids recorded (those still ours).

    One UPDATE for the group, then each item's own start and end (a batch's
    write time is never an item's) through the dialect's bulk row update (one
    statement on PostgreSQL, one in-process executemany on SQLite), then one
    executemany for the results that are not None. A single UPDATE with a
    CASE per item said the same but is a new statement for every group:
    SQLAlchemy's cache key and compile cost ~40 ms per 128 items.
    """
    if not results:
        return set()
    params = {"ids": [s.item_id for s in results], "worker": worker, "now": now}
    done = set(conn.execute(_SUCCEED, params).scalars())
    ours = [s for s in results if s.item_id in done]
    dialect = dialects.of(conn)
    enc = dialect.params
    # Each item's own instants; an item without its own start keeps the claim's.
    both = [
        (enc.datetime(s.started), enc.datetime(s.finished), enc.uuid(s.item_id))
        for s in ours
        if s.started
    ]
    dialect.update_rows(conn, queue_items, ("id",), ("started_at", "finished_at"), both)
    ended = [(enc.datetime(s.finished), enc.uuid(s.item_id)) for s in ours if not s.started]
    dialect.update_rows(conn, queue_items, ("id",), "finished_at", ended)
    values = [{"item": s.item_id, "result": s.result} for s in ours if s.result is not None]
    if values:
        conn.execute(_RESULT, values)
    return done


def release(conn: Connection, item_ids: Sequence[UUID], worker: str, now: datetime) -> int:
    """Give back claimed items that never started: queued, attempt undone (those asked to
    stop meanwhile are left to `cancels.cancel_unstarted`)."""
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
