"""PostgreSQL's bulk writes for the dispatcher's hot path: COPY text, arrays of keys.

The PostgreSQL half of store/bulk.py (see its docstring for the value
formats), here with the other PostgreSQL-only SQL (store/dialects/).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

import psycopg
from sqlalchemy import Boolean, Connection, Integer, Table, Uuid
from sqlalchemy.exc import DBAPIError

from cronplane.store.bulk import Encoder, as_is, column_tuple, set_clause
from cronplane.store.types import UTCDateTime


def _pg_datetime(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
    return value


PG_VALUES = Encoder(_pg_datetime, as_is)


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
        f"UPDATE {table.name} SET {set_clause(set_columns, '%s', extra_set)} "
        f"WHERE {compare}{key} = ANY(CAST(%s AS {_pg_type(table.c[key].type)}[]))"
    )
    return int(conn.exec_driver_sql(sql, (*values, *compared, pg_array(keys))).rowcount)


def pg_array(values: Sequence[UUID | str | int]) -> str:
    """A PostgreSQL array literal of uuids or integers, for `CAST(%s AS uuid[])`.

    One string built by `join` instead of an array parameter that psycopg
    dumps element by element in Python. Only for values that need no quoting.
    """
    return "{" + ",".join(map(str, values)) + "}"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _array_text(values: Sequence[Any], pg_type: str) -> str:
    """A column of `pg_update_rows` as one array literal (NULL for None): psycopg dumps a
    list element by element in Python, 6 ms a thousand timestamps against 2 this way."""
    if pg_type == "timestamptz":
        fields = ["NULL" if v is None else v.isoformat() for v in values]
    elif pg_type == "bool":
        fields = ["NULL" if v is None else ("t" if v else "f") for v in values]
    elif pg_type == "text":
        fields = ["NULL" if v is None else _quoted(str(v)) for v in values]
    else:  # uuid, int8: no character to quote
        fields = ["NULL" if v is None else str(v) for v in values]
    return "{" + ",".join(fields) + "}"


def pg_update_rows(
    conn: Connection,
    table: Table,
    keys: tuple[str, ...],
    column: str | tuple[str, ...],
    rows: Sequence[Any],
    *,
    extra_set: str = "",
    where: str = "",
    returning: bool = False,
) -> list[Any]:
    """PostgreSQL: as sqlite_update_rows, in one statement: the rows as arrays, joined
    through unnest (UPDATE … FROM), instead of a round trip per row.

    Returning, the first keys are also an `= ANY` of their own: joined alone, the planner
    hashed every row of the table (a seq scan of the whole queue for a group's thousand
    items, 8 of 24 ms); so it may look each one up by the key's index."""
    if not rows:
        return []
    columns = column_tuple(column)
    names = (*columns, *keys)
    types = [_pg_type(table.c[name].type) for name in names]
    arrays = [f"CAST(%s AS {pg_type}[])" for pg_type in types]
    aliases = [f"v{n}" for n in range(len(names))]
    assignments = ", ".join(
        f"{name} = v.{alias}" for name, alias in zip(columns, aliases, strict=False)
    )
    if extra_set:
        assignments += f", {extra_set}"
    conditions = [f"{table.name}.{key} = v.{alias}" for key, alias in zip(
        keys, aliases[len(columns):], strict=True
    )]  # fmt: skip
    if where:
        conditions.append(where)
    values = [
        _array_text(column_values, pg_type)
        for column_values, pg_type in zip(zip(*rows, strict=True), types, strict=True)
    ]
    tail = ""
    if returning:
        first = keys[0]
        conditions.append(f"{table.name}.{first} = ANY({arrays[len(columns)]})")
        values.append(values[len(columns)])
        tail = f" RETURNING {table.name}.{first}"
    sql = (
        f"UPDATE {table.name} SET {assignments} "
        f"FROM unnest({', '.join(arrays)}) AS v({', '.join(aliases)}) "
        f"WHERE {' AND '.join(conditions)}{tail}"
    )
    result = conn.exec_driver_sql(sql, tuple(values))
    return [row[0] for row in result] if returning else []
