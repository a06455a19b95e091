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

SQLite's functions and what both share are here; PostgreSQL's (COPY text,
arrays joined through unnest) are in store/dialects/pg_bulk.py, with its SQL.
store.dialects chooses. Only the dispatcher's batches use this; everything
else goes through Core.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Table

Convert = Callable[[Any], Any]


# A batch repeats a few instants (now, its expiry, the occurrence) thousands of times; a
# worker's group of a thousand outcomes has two instants each, written twice (the item,
# its attempt): room for them all.
@lru_cache(maxsize=4096)
def _sqlite_datetime(value: datetime | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value  # None, or already the stored text (read raw)
    if value.tzinfo is UTC:  # the usual case: "+00:00" cut, half the cost of converting
        return value.isoformat(sep=" ", timespec="microseconds")[:-6]
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def _uuid_hex(value: UUID | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value  # None, or already the stored hex (read raw)
    return value.hex


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def as_is(value: Any) -> Any:
    return value


class Encoder:
    """Driver-ready values of one database, for rows built as tuples in a hot loop."""

    # Row fields as `RowText` spells them (drivers take these as they are).
    null: Any = None

    def __init__(self, datetime: Convert, uuid: Convert) -> None:
        self.datetime = datetime
        self.uuid = uuid
        self.text: Convert = as_is
        self.int: Convert = as_is
        self.float: Convert = as_is

    def json(self, value: Any) -> str | None:
        """A JSON document as text."""
        return _json(value)


SQLITE_VALUES = Encoder(_sqlite_datetime, _uuid_hex)


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


def set_clause(set_columns: tuple[str, ...], mark: str, extra_set: str) -> str:
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
        f"UPDATE {table.name} SET {set_clause(set_columns, '?', extra_set)} "
        f"WHERE {match[0]} = ? AND {key}"
    )
    matched = 0
    for start in range(0, len(keys), _SQLITE_IN_CHUNK):
        chunk = keys[start : start + _SQLITE_IN_CHUNK]
        sql = f"{head} IN ({', '.join('?' * len(chunk))})"
        matched += int(conn.exec_driver_sql(sql, (*values, match[1], *chunk)).rowcount)
    return matched


def column_tuple(column: str | tuple[str, ...]) -> tuple[str, ...]:
    return (column,) if isinstance(column, str) else column


def sqlite_update_rows(
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
    """SQLite: UPDATE … SET column = ? (or each of several columns) WHERE each key = ?, for
    each (value(s), *key values) row of driver values (one executemany: in-process, no
    round trips).

    `extra_set`, `where`: constant SQL the rows share (more assignments, a condition);
    `returning`: the first key of each row updated. Those take one UPDATE … FROM a VALUES
    list per thousand rows (an executemany returns no rows).
    """
    if not rows:
        return []
    columns = column_tuple(column)
    if not (extra_set or where or returning):
        where_keys = " AND ".join(f"{key} = ?" for key in keys)
        assignments = ", ".join(f"{name} = ?" for name in columns)
        conn.exec_driver_sql(
            f"UPDATE {table.name} SET {assignments} WHERE {where_keys}", list(rows)
        )
        return []
    names = [f"c{n}" for n in range(len(columns))] + [f"k{n}" for n in range(len(keys))]
    assignments = ", ".join(f"{name} = v.c{n}" for n, name in enumerate(columns))
    if extra_set:
        assignments += f", {extra_set}"
    conditions = [f"{table.name}.{key} = v.k{n}" for n, key in enumerate(keys)]
    if where:
        conditions.append(where)
    tail = f" RETURNING {table.name}.{keys[0]}" if returning else ""
    one = f"({', '.join('?' * len(names))})"
    found: list[Any] = []
    per_statement = max(1, min(1_000, _SQLITE_MAX_PARAMS // len(names)))
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        sql = (
            f"WITH v({', '.join(names)}) AS (VALUES {', '.join([one] * len(chunk))}) "
            f"UPDATE {table.name} SET {assignments} FROM v WHERE {' AND '.join(conditions)}{tail}"
        )
        result = conn.exec_driver_sql(sql, tuple(chain.from_iterable(chunk)))
        if returning:
            found += [row[0] for row in result]
    return found
