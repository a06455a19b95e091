"""Rows built as dicts (a table's column values), written in one bulk statement: one
multi-row INSERT on SQLite, one COPY on PostgreSQL (`store.bulk`).

For the alert evaluator, whose pass may open hundreds of alerts at once: through
Core's executemany each row is a round trip on PostgreSQL. The columns are the
first row's keys (every row has the same); each value is encoded by its column's
type with the dialect's `row_encoder`, as the dispatcher's batches are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import JSON, Boolean, Connection, Float, Integer, Table, Uuid

from cronplane.store import dialects
from cronplane.store.dialects.pg_bulk import RowText
from cronplane.store.types import UTCDateTime


def _converter(encoder: Any, column_type: Any) -> Callable[[Any], Any]:
    if isinstance(column_type, UTCDateTime):
        convert: Callable[[Any], Any] = encoder.datetime
    elif isinstance(column_type, Uuid):
        convert = encoder.uuid
    elif isinstance(column_type, JSON):  # JSONDocument (JSONB on PostgreSQL)
        convert = encoder.json
    elif isinstance(column_type, Boolean):
        # COPY text spells booleans t/f; SQLite stores them as 0/1.
        text = isinstance(encoder, RowText)
        return lambda value: ("t" if value else "f") if text else int(bool(value))
    elif isinstance(column_type, Integer):
        convert = encoder.int
    elif isinstance(column_type, Float):
        convert = encoder.float
    else:
        convert = encoder.text
    return convert


def insert_dicts(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` (dicts of column values, the same keys each) in one bulk statement."""
    if not rows:
        return
    dialect = dialects.of(conn)
    encoder = dialect.row_encoder
    columns = tuple(rows[0])
    converters = [_converter(encoder, table.c[name].type) for name in columns]
    null = encoder.null
    encoded = [
        tuple(
            null if row[name] is None else convert(row[name])
            for name, convert in zip(columns, converters, strict=True)
        )
        for row in rows
    ]
    dialect.insert_rows(conn, table, columns, encoded)
