"""The worker's outcome events, written a group at a time through the bulk path.

A batch of outcomes appends one event per item. Through Core's executemany
that was the largest share of a batch's time on PostgreSQL (a round trip
per row); here the rows are encoded once (`Dialect.row_encoder`) and go out
as one multi-row INSERT on SQLite or one COPY on PostgreSQL, the way the
dispatcher writes its ledger (store.dispatch).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from cronplane.store import dialects
from cronplane.store.dispatch.transaction import EVENT_COLUMNS
from cronplane.store.tables import events

# How each column of EVENT_COLUMNS is encoded (an Encoder / RowText attribute).
_KINDS = (
    "text", "text", "text", "text", "uuid", "text", "uuid",
    "text", "text", "datetime", "datetime", "datetime", "json",
)  # fmt: skip


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
