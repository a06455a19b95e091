"""Queue items decoded by hand from the driver's values: what a worker's claim reads.

A claim turns up to a thousand rows into records before the first of them starts.
Through SQLAlchemy's result processing that cost ~17 ms a thousand rows on either
database against ~3 ms (SQLite) / ~7 ms (PostgreSQL) for the driver's own fetch: each
row's ten timestamps go through the `UTCDateTime` processor (on SQLite parsed, then made
aware by `datetime.replace`, itself slower than the parse), two UUIDs and two JSON
documents through theirs. So the claim selects the columns untyped (`COLUMNS`: the
driver's values as they are) and the database's function here makes the records
(`dialects.of(conn).decode_items(rows)`), ~11 / ~12 ms a thousand (docs/performance.md,
"Issue 32, fourth sitting"). Everything else reads items through Core
(`store.queue.item_from_row`); tests/store/test_item_rows.py holds the two equal on both
databases.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, overload
from uuid import UUID

from sqlalchemy import type_coerce
from sqlalchemy.types import NullType

from cronplane.core.model import QueueItem
from cronplane.store.tables import queue_items

# The record's fields in its order, each as the driver returns it (no result processor).
COLUMNS = tuple(
    type_coerce(queue_items.c[name], NullType()).label(name) for name in QueueItem.__slots__
)

Row = Sequence[Any]


@overload
def sqlite_instant(text: str) -> datetime: ...
@overload
def sqlite_instant(text: None) -> None: ...
def sqlite_instant(text: str | None) -> datetime | None:
    """A stored SQLite timestamp (naive UTC text, `YYYY-MM-DD HH:MM:SS[.ffffff]`) as aware
    UTC: parsed with its zone appended, six times cheaper than parsing and then
    `replace(tzinfo=UTC)`."""
    return None if text is None else datetime.fromisoformat(text + "+00:00")


@overload
def postgresql_instant(value: datetime) -> datetime: ...
@overload
def postgresql_instant(value: None) -> None: ...
def postgresql_instant(value: datetime | None) -> datetime | None:
    """A `timestamptz` as psycopg returns it (aware, in the session's zone) in UTC."""
    if value is None or value.tzinfo is UTC:
        return value
    return value.astimezone(UTC)


def _json(text: str | float | None) -> Any:
    # Most payloads are "{}": a new dict each time (a record's payload is its own).
    if text == "{}":
        return {}
    if not isinstance(text, str):
        return text  # NULL, or a JSON number SQLite's column affinity stored as one
    return json.loads(text)


def _uuid(text: str | None) -> UUID | None:
    return None if text is None else UUID(text)


def _same(value: Any) -> Any:
    return value


# fmt: off
def _records(
    rows: Iterable[Row],
    ident: Callable[[Any], Any],
    doc: Callable[[Any], Any],
    flag: Callable[[Any], Any],
    at: Callable[[Any], Any],
) -> list[QueueItem]:
    """The records of `rows` (the fields in COLUMNS' order, unpacked by name), each kind
    of value through its database's conversion: ids, JSON, booleans, instants."""
    return [
        QueueItem(
            ident(item_id), tenant, stack, environment, job, doc(payload), source,
            ident(schedule_id), at(scheduled_for), priority, status, at(available_at),
            at(expires_at), attempts, max_attempts, lease_owner, at(heartbeat_at),
            at(lease_expires_at), doc(result), error, at(created_at), at(started_at),
            at(finished_at), at(updated_at), timeout, max_concurrency, flag(exclusive),
            at(cancel_requested_at), cancelled_by,
        )
        for (
            item_id, tenant, stack, environment, job, payload, source, schedule_id,
            scheduled_for, priority, status, available_at, expires_at, attempts, max_attempts,
            lease_owner, heartbeat_at, lease_expires_at, result, error, created_at, started_at,
            finished_at, updated_at, timeout, max_concurrency, exclusive, cancel_requested_at,
            cancelled_by,
        ) in rows
    ]
# fmt: on


def from_sqlite(rows: Iterable[Row]) -> list[QueueItem]:
    """SQLite: ids as 32 hex digits, timestamps as naive UTC text, JSON as text, booleans
    as 0/1."""
    return _records(rows, _uuid, _json, bool, sqlite_instant)


def from_postgresql(rows: Iterable[Row]) -> list[QueueItem]:
    """PostgreSQL (psycopg): ids, JSON and booleans come decoded; timestamps in the
    session's zone."""
    return _records(rows, _same, _same, _same, postgresql_instant)
