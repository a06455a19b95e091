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
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
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
        # Row fields as `RowText` spells them (drivers take these as they are).
        self.null: Any = None
        self.text: Convert = _same
        self.int: Convert = _same

    def json(self, value: Any) -> str | None:
        """A JSON document as text."""
        return _json(value)


_COPY_SPECIAL = re.compile(r"[\\\t\n\r]")


def needs_copy_escape(value: str) -> bool:
    """True when the string has a character COPY's text format escapes."""
    return _COPY_SPECIAL.search(value) is not None


def copy_escape(value: str) -> str:
    """A string as a field of COPY's text format (backslash, tab, newline, CR escaped)."""
    if _COPY_SPECIAL.search(value) is None:
        return value
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


@lru_cache(maxsize=1024)
def _copy_datetime(value: datetime | None) -> str:
    if value is None:
        return "\\N"
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
    return value.isoformat()


def _copy_uuid(value: UUID | str | None) -> str:
    return "\\N" if value is None else str(value)


def _copy_json(value: Any) -> str:
    return "\\N" if value is None else copy_escape(json.dumps(value))


class RowText:
    """Row fields for PostgreSQL as text of COPY's format, every field a `str`.

    With every field already text, a batch's rows go out as one buffer of
    tab-joined lines (`insert_rows`) instead of through psycopg's
    `write_row`, which formats each value of each row (about 20 µs a fire
    batch item, the largest client cost of a batch). Same interface as
    Encoder's row fields; strings read from the database go through `text`.
    """

    null = "\\N"

    def __init__(self) -> None:
        self.datetime: Callable[[datetime | None], str] = _copy_datetime
        self.uuid: Callable[[UUID | str | None], str] = _copy_uuid
        self.text: Callable[[str], str] = copy_escape
        self.int: Callable[[int], str] = str

    def json(self, value: Any) -> str:
        """A JSON document as a COPY field."""
        return _copy_json(value)


def row_encoder(dialect: str) -> Encoder | RowText:
    """The encoder for rows given to `insert_rows` on this dialect."""
    return RowText() if dialect == "postgresql" else Encoder(dialect)


def insert_rows(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
) -> None:
    """INSERT rows encoded by `row_encoder` in `columns` order.

    SQLite: multi-row VALUES statements. PostgreSQL: one COPY of the rows
    joined as text (each field is already a COPY text field).
    """
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        data = "\n".join(["\t".join(row) for row in rows])
        _pg_copy_data(conn, table, columns, data + "\n")
        return
    _, marks = _plan(table, columns, conn.dialect.name)
    _sqlite_insert(conn, table.name, columns, marks, rows)


def insert_values(
    conn: Connection, table: str, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
) -> None:
    """SQLite: INSERT rows of plain driver values into `table` (any table, a temporary one too)."""
    _sqlite_insert(conn, table, columns, ("?",) * len(columns), rows)


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
    _sqlite_insert(conn, table.name, columns, marks, rows)


# SQLite's limit on bound parameters in one statement.
_SQLITE_MAX_PARAMS = 32_766


def _sqlite_insert(
    conn: Connection,
    table: str,
    columns: tuple[str, ...],
    marks: tuple[str, ...],
    rows: Sequence[Sequence[Any]],
) -> None:
    """INSERT … VALUES (…), (…), … with up to 1,000 rows a statement.

    Multi-row VALUES instead of executemany: executemany goes back through
    the Python driver for every row (reset, bind, step), a multi-row statement
    loops inside SQLite; a fire batch's inserts took about a third less time.
    """
    per_statement = max(1, min(1_000, _SQLITE_MAX_PARAMS // len(columns)))
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    one = f"({', '.join(marks)})"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        sql = head + ", ".join([one] * len(chunk))
        conn.exec_driver_sql(sql, tuple(chain.from_iterable(chunk)))


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


def _pg_copy_data(conn: Connection, table: Table, columns: tuple[str, ...], data: str) -> None:
    """COPY … FROM STDIN of data already in COPY's text format (see _pg_copy)."""
    raw: Any = conn.connection.dbapi_connection
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    try:
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            copy.write(data)
    except psycopg.Error as error:
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
    tuples = rows_as_tuples(conn, table, columns, rows)
    if conn.dialect.name == "postgresql":
        _, marks = _plan(table, columns, conn.dialect.name)
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})"
        conn.exec_driver_sql(sql, tuples)
    else:
        _sqlite_insert(conn, table.name, columns, _plan(table, columns, "sqlite")[1], tuples)


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


# Below SQLite's bound-parameter limit (32,766) with room for the SET values.
_SQLITE_IN_CHUNK = 10_000


def update_in(
    conn: Connection,
    table: Table,
    set_columns: tuple[str, ...],
    values: Sequence[Any],
    *,
    match: tuple[str, Any],
    key: str,
    keys: Sequence[Any],
    extra_set: str = "",
) -> int:
    """UPDATE … SET set_columns = values WHERE match AND key IN keys; rows matched.

    For many rows that get the same values (a fire batch's rows due together
    all move to one next_run): one statement per group instead of one per row.
    `values`, the `match` value and `keys` are driver-ready (see Encoder).
    `key` is a column name, or `rowid` on SQLite (no index lookup per row).
    """
    if not keys:
        return 0
    mark = "?" if conn.dialect.name == "sqlite" else "%s"
    assignments = [f"{name} = {mark}" for name in set_columns]
    if extra_set:
        assignments.append(extra_set)
    head = f"UPDATE {table.name} SET {', '.join(assignments)} WHERE {match[0]} = {mark} AND {key}"
    if conn.dialect.name == "postgresql":
        # One array parameter whatever the group's size, cast, so text keys
        # work for a uuid column.
        sql = f"{head} = ANY(CAST(%s AS {_pg_type(table.c[key].type)}[]))"
        return int(conn.exec_driver_sql(sql, (*values, match[1], pg_array(keys))).rowcount)
    matched = 0
    for start in range(0, len(keys), _SQLITE_IN_CHUNK):
        chunk = keys[start : start + _SQLITE_IN_CHUNK]
        sql = f"{head} IN ({', '.join('?' * len(chunk))})"
        matched += int(conn.exec_driver_sql(sql, (*values, match[1], *chunk)).rowcount)
    return matched


def pg_array(values: Sequence[UUID | str | int]) -> str:
    """A PostgreSQL array literal of uuids or integers, for `CAST(%s AS uuid[])`.

    One string built by `join` instead of an array parameter that psycopg
    dumps element by element in Python. Only for values that need no quoting.
    """
    return "{" + ",".join(map(str, values)) + "}"


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
