"""Bulk writes for the dispatcher's hot path: executemany without per-value overhead.

SQLAlchemy's bind processing costs more than the database itself when one
transaction writes thousands of rows (a fire batch writes an item, a
schedule update and an event per fire). Here each column's conversion is
chosen once per (table, columns, dialect), and the rows go to the driver's
`executemany` as plain tuples, stored exactly as the Core types store them:

- `UTCDateTime`: SQLite text `YYYY-MM-DD HH:MM:SS.ffffff` in UTC (SQLAlchemy's
  format, so comparisons with Core-written values hold); aware datetimes on
  PostgreSQL;
- `Uuid`: 32 hex digits on SQLite; `uuid.UUID` on PostgreSQL;
- JSON documents: `json.dumps` text (`::jsonb` on PostgreSQL);
- booleans: 0/1 on SQLite.

Only the dispatcher's batches use this; everything else goes through Core.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

import psycopg
from sqlalchemy import JSON, Boolean, Connection, Integer, Table, Uuid
from sqlalchemy.exc import DBAPIError

from cronplane.store.types import UTCDateTime

Convert = Callable[[Any], Any]


# A batch repeats a few instants (now, its expiry, the occurrence) thousands of times.
@lru_cache(maxsize=1024)
def _sqlite_datetime(value: datetime | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value  # None, or already the stored text (read raw)
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _pg_datetime(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
    return value


def _uuid_hex(value: UUID | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value  # None, or already the stored hex (read raw)
    return value.hex


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _sqlite_bool(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _same(value: Any) -> Any:
    return value


def _is_json(column_type: Any) -> bool:
    # JSONDocument is JSON().with_variant(JSONB(), "postgresql"): a JSON at heart.
    return isinstance(column_type, JSON)


def _converter(column_type: Any, dialect: str) -> tuple[Convert, str]:
    """The value conversion and placeholder for one column."""
    mark = "?" if dialect == "sqlite" else "%s"
    if isinstance(column_type, UTCDateTime):
        return (_sqlite_datetime if dialect == "sqlite" else _pg_datetime), mark
    if isinstance(column_type, Uuid):
        return (_uuid_hex if dialect == "sqlite" else _same), mark
    if _is_json(column_type):
        return _json, (mark if dialect == "sqlite" else "%s::jsonb")
    if isinstance(column_type, Boolean):
        return (_sqlite_bool if dialect == "sqlite" else _same), mark
    return _same, mark


@lru_cache(maxsize=64)
def _plan(
    table: Table, columns: tuple[str, ...], dialect: str
) -> tuple[tuple[Convert, ...], tuple[str, ...]]:
    converters, marks = [], []
    for name in columns:
        convert, mark = _converter(table.c[name].type, dialect)
        converters.append(convert)
        marks.append(mark)
    return tuple(converters), tuple(marks)


class Encoder:
    """Driver-ready values for one dialect, for rows built as tuples in a hot loop."""

    def __init__(self, dialect: str) -> None:
        self.sqlite = dialect == "sqlite"
        self.datetime: Convert = _sqlite_datetime if self.sqlite else _pg_datetime
        self.uuid: Convert = _uuid_hex if self.sqlite else _same
        self.json_mark = "?" if self.sqlite else "%s::jsonb"

    def json(self, value: Any) -> str | None:
        """A JSON document as text."""
        return _json(value)


def insert_tuples(
    conn: Connection,
    table: Table,
    columns: tuple[str, ...],
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """INSERT rows already encoded (see Encoder) in `columns` order, one executemany."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        _pg_copy(conn, table, columns, rows)
        return
    _, marks = _plan(table, columns, conn.dialect.name)
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})"
    conn.exec_driver_sql(sql, list(rows))


def _pg_copy(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
) -> None:
    """COPY … FROM STDIN inside the caller's transaction.

    psycopg formats COPY rows in its C extension, where array parameters
    (`INSERT … SELECT FROM unnest(…)`) are dumped element by element in
    Python: for a fire batch that was the largest client cost. Constraints
    hold exactly as for INSERT: a second item for one occurrence still raises
    a unique violation and the whole batch rolls back.
    """
    raw: Any = conn.connection.dbapi_connection
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    try:
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.Error as error:
        # The raw cursor bypasses SQLAlchemy's wrapping; wrap as any statement's
        # error is (IntegrityError, OperationalError …) so callers see one kind.
        raise DBAPIError.instance(statement, None, error, psycopg.Error) from error


def _pg_type(column_type: Any) -> str:
    if isinstance(column_type, UTCDateTime):
        return "timestamptz"
    if isinstance(column_type, Uuid):
        return "uuid"
    if isinstance(column_type, Boolean):
        return "bool"
    if isinstance(column_type, Integer):
        return "int8"
    return "text"  # strings, and JSON documents as text (cast after unnest)


@lru_cache(maxsize=64)
def _unnest(table: Table, columns: tuple[str, ...]) -> str:
    """`unnest(%b::t1[], …) AS u(c0, …)`: one statement's worth of rows as arrays."""
    # `%b`: binary parameters (psycopg), so array elements need no escaping.
    arrays = ", ".join(f"%b::{_pg_type(table.c[name].type)}[]" for name in columns)
    alias = ", ".join(f"c{n}" for n in range(len(columns)))
    return f"unnest({arrays}) AS u({alias})"


def rows_as_tuples(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[Mapping[str, Any]]
) -> list[tuple[Any, ...]]:
    """The rows' values in `columns` order, converted for the driver."""
    converters, _ = _plan(table, columns, conn.dialect.name)
    pairs = tuple(zip(columns, converters, strict=True))
    return [tuple(convert(row[name]) for name, convert in pairs) for row in rows]


def insert(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT many rows (each with every key of the first) in one executemany."""
    if not rows:
        return
    columns = tuple(rows[0])
    _, marks = _plan(table, columns, conn.dialect.name)
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})"
    conn.exec_driver_sql(sql, rows_as_tuples(conn, table, columns, rows))


def update(
    conn: Connection,
    table: Table,
    set_columns: tuple[str, ...],
    where_columns: tuple[str, ...],
    rows: Sequence[Sequence[Any]],
    *,
    extra_set: str = "",
) -> int:
    """UPDATE … SET set_columns WHERE where_columns (each equal) per row; rows matched.

    Each row is a sequence of values: the SET values, then the WHERE values.
    """
    if not rows:
        return 0
    columns = set_columns + where_columns
    converters, marks = _plan(table, columns, conn.dialect.name)
    if conn.dialect.name == "postgresql":
        return _pg_update(conn, table, set_columns, where_columns, rows, converters, extra_set)
    assignments = [f"{name} = {mark}" for name, mark in zip(set_columns, marks, strict=False)]
    if extra_set:
        assignments.append(extra_set)
    conditions = [
        f"{name} = {mark}"
        for name, mark in zip(where_columns, marks[len(set_columns) :], strict=True)
    ]
    sql = f"UPDATE {table.name} SET {', '.join(assignments)} WHERE {' AND '.join(conditions)}"
    params = [
        tuple(convert(value) for convert, value in zip(converters, row, strict=True))
        for row in rows
    ]
    return int(conn.exec_driver_sql(sql, params).rowcount)


def _pg_update(
    conn: Connection,
    table: Table,
    set_columns: tuple[str, ...],
    where_columns: tuple[str, ...],
    rows: Sequence[Sequence[Any]],
    converters: tuple[Convert, ...],
    extra_set: str,
) -> int:
    """UPDATE … FROM unnest(arrays): one statement and an exact matched count."""
    columns = set_columns + where_columns
    arrays = _unnest(table, columns)
    count = len(set_columns)
    assignments = [f"{name} = u.c{n}" for n, name in enumerate(set_columns)]
    if extra_set:
        assignments.append(extra_set)
    conditions = [f"t.{name} = u.c{count + n}" for n, name in enumerate(where_columns)]
    sql = (
        f"UPDATE {table.name} AS t SET {', '.join(assignments)} "
        f"FROM {arrays} WHERE {' AND '.join(conditions)}"
    )
    params = tuple(
        [convert(value) for value in column]
        for convert, column in zip(converters, zip(*rows, strict=True), strict=True)
    )
    return _pg_execute(conn, sql, params)


def _pg_execute(conn: Connection, sql: str, params: Sequence[list[Any]]) -> int:
    """Run one statement of array parameters; return its rowcount."""
    return int(conn.exec_driver_sql(sql, tuple(params)).rowcount)
