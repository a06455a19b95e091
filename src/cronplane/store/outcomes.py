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


# A success: its status, the lease given up, each item's own instants (and `updated_at`,
# the write's `now`), only while the item is still ours (`lease_owner`, `running`).
_SUCCEEDED = (
    "status = 'succeeded', error = NULL, result = NULL, lease_owner = NULL, lease_expires_at = NULL"
)
_RUNNING = "status = 'running'"


def succeed_many(
    conn: Connection, results: Sequence[Success], worker: str, now: datetime
) -> set[UUID]:
    """Record successes; the ids recorded (those still ours).

    One conditional UPDATE for the group that writes each item's own start and end (a
    batch's write time is never an item's), through the dialect's bulk row update (an
    UPDATE … FROM the rows' values, one per thousand on SQLite, one on PostgreSQL), then
    one executemany for the results that are not None. It was two UPDATEs, the status by
    id and then the instants by row: every row written twice, and on PostgreSQL the
    second joined the whole queue (24 of ~46 ms a thousand items). A single UPDATE with a
    CASE per item is a new statement for every group: SQLAlchemy's cache key and compile
    cost ~40 ms per 128 items.
    """
    if not results:
        return set()
    dialect = dialects.of(conn)
    enc = dialect.params
    at, owner = enc.datetime(now), worker
    ids = {enc.uuid(s.item_id): s.item_id for s in results}
    done: set[UUID] = set()
    # Each item's own instants; an item without its own start keeps the claim's.
    for columns, rows in (
        (
            ("started_at", "finished_at", "updated_at"),
            [
                (enc.datetime(s.started), enc.datetime(s.finished), at, enc.uuid(s.item_id), owner)
                for s in results
                if s.started
            ],
        ),
        (
            ("finished_at", "updated_at"),
            [
                (enc.datetime(s.finished), at, enc.uuid(s.item_id), owner)
                for s in results
                if not s.started
            ],
        ),
    ):
        found = dialect.update_rows(
            conn,
            queue_items,
            ("id", "lease_owner"),
            columns,
            rows,
            extra_set=_SUCCEEDED,
            where=_RUNNING,
            returning=True,
        )
        done.update(ids[key] for key in found)
    values = [
        {"item": s.item_id, "result": s.result}
        for s in results
        if s.result is not None and s.item_id in done
    ]
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
    pairs = list(zip(EVENT_COLUMNS, converters, strict=True))
    # A list made inside, not a generator: half the time for a thousand rows of 13 fields.
    encoded = [
        tuple(
            [
                null if (value := row[column]) is None else convert(value)
                for column, convert in pairs
            ]
        )
        for row in rows
    ]
    dialect.insert_rows(conn, events, EVENT_COLUMNS, encoded)
