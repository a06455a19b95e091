"""Bulk writes for the dispatcher's hot path: driver-ready values, no per-value overhead.

SQLAlchemy's bind processing costs more than the database itself when one
transaction writes thousands of rows (a fire batch writes an item, a
schedule update and an event per fire). Here the rows are plain tuples of
values stored exactly as the Core types store them:

- `UTCDateTime`: SQLite text `YYYY-MM-DD HH:MM:SS.ffffff` in UTC (SQLAlchemy's
  format, so comparisons with Core-written values hold); aware datetimes on
  PostgreSQL (COPY text in `RowText`);
- `Uuid`: 32 hex digits on SQLite; `uuid.UUID` or its text on PostgreSQL;
- JSON documents: `json.dumps` text.

Each database's functions are named for it; store.dialects chooses. Only
the dispatcher's batches use this; everything else goes through Core.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from typing import Any
from uuid import UUID

import psycopg
from sqlalchemy import Boolean, Connection, Integer, Table, Uuid
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


def _same(value: Any) -> Any:
    return value


class Encoder:
    """Driver-ready values of one database, for rows built as tuples in a hot loop."""

    # Row fields as `RowText` spells them (drivers take these as they are).
    null: Any = None

    def __init__(self, datetime: Convert, uuid: Convert) -> None:
        self.datetime = datetime
        self.uuid = uuid
        self.text: Convert = _same
        self.int: Convert = _same
        self.float: Convert = _same

    def json(self, value: Any) -> str | None:
        """A JSON document as text."""
        return _json(value)


SQLITE_VALUES = Encoder(_sqlite_datetime, _uuid_hex)
PG_VALUES = Encoder(_pg_datetime, _same)


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
    tab-joined lines (`pg_copy`) instead of through psycopg's
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
        self.float: Callable[[float], str] = repr

    def json(self, value: Any) -> str:
        """A JSON document as a COPY field."""
        return _copy_json(value)


# SQLite's limit on bound parameters in one statement.
_SQLITE_MAX_PARAMS = 32_766


def sqlite_insert(
    conn: Connection, table: Table | str, columns: tuple[str, ...], rows: Sequence[Sequence[Any]]
) -> None:
    """SQLite: INSERT … VALUES (…), (…), … of driver values, up to 1,000 rows a statement.

    Multi-row VALUES instead of executemany: executemany goes back through
    the Python driver for every row (reset, bind, step), a multi-row statement
    loops inside SQLite; a fire batch's inserts took about a third less time.
    `table` is a Table or any table's name (a temporary one too).
    """
    name = table if isinstance(table, str) else table.name
    per_statement = max(1, min(1_000, _SQLITE_MAX_PARAMS // len(columns)))
    head = f"INSERT INTO {name} ({', '.join(columns)}) VALUES "
    one = f"({', '.join('?' * len(columns))})"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        sql = head + ", ".join([one] * len(chunk))
        conn.exec_driver_sql(sql, tuple(chain.from_iterable(chunk)))


def pg_copy(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[Sequence[str]]
) -> None:
    """PostgreSQL: COPY … FROM STDIN of rows of COPY text fields (`RowText`), in the transaction.

    The rows go out as one buffer of tab-joined lines: psycopg's `write_row`
    formats each value of each row in Python, the largest client cost of a
    batch. Constraints hold exactly as for INSERT: a second item for one
    occurrence still raises a unique violation and the whole batch rolls back.
    """
    if rows:
        with pg_copy_stream(conn, table, columns) as write:
            write(copy_text(rows))


def copy_text(rows: Sequence[Sequence[str]]) -> str:
    """Rows of COPY text fields (`RowText`) as COPY's text format: tab-joined lines."""
    return "\n".join(["\t".join(row) for row in rows]) + "\n" if rows else ""


@contextmanager
def pg_copy_stream(
    conn: Connection, table: Table, columns: tuple[str, ...]
) -> Iterator[Callable[[str], None]]:
    """PostgreSQL: an open COPY … FROM STDIN; `write(text)` sends `copy_text` lines.

    Lines written while the caller builds the next ones are inserted by the
    server meanwhile (psycopg sends every 32 KB): the client's work and the
    server's overlap instead of taking turns. An exception inside the block
    aborts the COPY (the server discards it; the transaction is in error and
    must roll back); a constraint violation raises as `pg_copy`'s does.
    """
    raw: Any = conn.connection.dbapi_connection
    statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
    try:
        with raw.cursor() as cursor, cursor.copy(statement) as copy:

            def write(text: str) -> None:
                if text:
                    copy.write(text)

            yield write
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
    return "text"


def _assignments(set_columns: tuple[str, ...], mark: str, extra_set: str) -> str:
    assignments = [f"{name} = {mark}" for name in set_columns]
    if extra_set:
        assignments.append(extra_set)
    return ", ".join(assignments)


# Below SQLite's bound-parameter limit (32,766) with room for the SET values.
_SQLITE_IN_CHUNK = 10_000


def sqlite_update_in(
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
    """SQLite: UPDATE … SET set_columns = values WHERE match AND key IN keys; rows matched.

    For many rows that get the same values (a fire batch's rows due together
    all move to one next_run): one statement per group instead of one per row.
    `key` is a column name, or `rowid` (no index lookup per row).
    """
    head = (
        f"UPDATE {table.name} SET {_assignments(set_columns, '?', extra_set)} "
        f"WHERE {match[0]} = ? AND {key}"
    )
    matched = 0
    for start in range(0, len(keys), _SQLITE_IN_CHUNK):
        chunk = keys[start : start + _SQLITE_IN_CHUNK]
        sql = f"{head} IN ({', '.join('?' * len(chunk))})"
        matched += int(conn.exec_driver_sql(sql, (*values, match[1], *chunk)).rowcount)
    return matched


def pg_update_in(
    conn: Connection,
    table: Table,
    set_columns: tuple[str, ...],
    values: Sequence[Any],
    *,
    match: tuple[str, Any] | None,
    key: str,
    keys: Sequence[Any],
    extra_set: str = "",
) -> int:
    """PostgreSQL: as sqlite_update_in, with the keys as one array parameter
    (`match` None: no compare-and-set, the keys alone).

    Cast, so text keys work for a uuid column, whatever the group's size.
    """
    if not keys:
        return 0
    compare, compared = ("", ()) if match is None else (f"{match[0]} = %s AND ", (match[1],))
    sql = (
        f"UPDATE {table.name} SET {_assignments(set_columns, '%s', extra_set)} "
        f"WHERE {compare}{key} = ANY(CAST(%s AS {_pg_type(table.c[key].type)}[]))"
    )
    return int(conn.exec_driver_sql(sql, (*values, *compared, pg_array(keys))).rowcount)


def pg_array(values: Sequence[UUID | str | int]) -> str:
    """A PostgreSQL array literal of uuids or integers, for `CAST(%s AS uuid[])`.

    One string built by `join` instead of an array parameter that psycopg
    dumps element by element in Python. Only for values that need no quoting.
    """
    return "{" + ",".join(map(str, values)) + "}"


def _set_columns(column: str | tuple[str, ...]) -> tuple[str, ...]:
    return (column,) if isinstance(column, str) else column


def sqlite_update_rows(
    conn: Connection,
    table: Table,
    keys: tuple[str, ...],
    column: str | tuple[str, ...],
    rows: Sequence[Any],
) -> None:
    """SQLite: UPDATE … SET column = ? (or each of several columns) WHERE each key = ?, for
    each (value(s), *key values) row of driver values (one executemany: in-process, no
    round trips)."""
    if rows:
        where = " AND ".join(f"{key} = ?" for key in keys)
        assignments = ", ".join(f"{name} = ?" for name in _set_columns(column))
        conn.exec_driver_sql(f"UPDATE {table.name} SET {assignments} WHERE {where}", list(rows))


def pg_update_rows(
    conn: Connection,
    table: Table,
    keys: tuple[str, ...],
    column: str | tuple[str, ...],
    rows: Sequence[Any],
) -> None:
    """PostgreSQL: as sqlite_update_rows, in one statement: the rows as arrays, joined
    through unnest (UPDATE … FROM), instead of a round trip per row."""
    if not rows:
        return
    columns = _set_columns(column)
    names = (*columns, *keys)
    arrays = [f"CAST(%s AS {_pg_type(table.c[name].type)}[])" for name in names]
    aliases = [f"v{n}" for n in range(len(names))]
    assignments = ", ".join(
        f"{name} = v.{alias}" for name, alias in zip(columns, aliases, strict=False)
    )
    where = " AND ".join(f"{table.name}.{key} = v.{alias}" for key, alias in zip(
        keys, aliases[len(columns):], strict=True
    ))  # fmt: skip
    sql = (
        f"UPDATE {table.name} SET {assignments} "
        f"FROM unnest({', '.join(arrays)}) AS v({', '.join(aliases)}) WHERE {where}"
    )
    conn.exec_driver_sql(sql, tuple([list(values) for values in zip(*rows, strict=True)]))
