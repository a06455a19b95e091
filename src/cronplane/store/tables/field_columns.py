"""A schedule field's column and its CHECK, read off its row in `core.fields`.

The `schedules` table lists no settable field by hand: each row of the field
table is a column here by its kind, nullable where the row may store null,
with its default as the server default when it was added after rows existed
(what those rows hold), and a CHECK that keeps the column in the row's domain
(a whole number's minimum, a choice's values). Migrations are history and
spell their columns out; tests/store/test_migrations.py holds the migrated
database to these columns and these CHECKs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import CheckConstraint, Column, Integer, String, TextClause, text
from sqlalchemy.types import TypeEngine

from cronplane.core.schedule_field import ScheduleField
from cronplane.store.types import JSONDocument, UTCDateTime

# Text kinds' widths: a name or zone is an identifier, a cron an expression.
_WIDTHS = {"name": 64, "zone": 64, "cron": 256}
_DOCUMENTS = ("json", "labels", "names")
_WHOLE = ("seconds", "count")


def field_columns(rows: Iterable[ScheduleField]) -> Iterator[Column[Any]]:
    """A column for each of the field table's `rows`, in their order."""
    for row in rows:
        yield Column(
            row.name, _type(row), nullable=row.stores_null, server_default=_server_default(row)
        )


def field_checks(rows: Iterable[ScheduleField]) -> Iterator[CheckConstraint]:
    """Each of those columns' CHECK, named as the field (ck_schedules_<field>)."""
    for row in rows:
        condition = check_condition(row)
        if condition is not None:
            yield CheckConstraint(condition, name=row.name)


def check_condition(row: ScheduleField) -> str | None:
    """The SQL a field's column holds to, or None for a kind the service alone checks."""
    if row.kind in _WHOLE and row.minimum is not None:
        held = f"{row.name} >= {row.minimum}"
    elif row.kind == "choice":
        held = f"{row.name} IN ({', '.join(repr(choice) for choice in row.choices)})"
    else:
        return None
    return f"{row.name} IS NULL OR {held}" if row.stores_null else held


def _type(row: ScheduleField) -> TypeEngine[Any]:
    if row.kind in _WIDTHS:
        return String(_WIDTHS[row.kind])
    if row.kind in _DOCUMENTS:
        document: TypeEngine[Any] = JSONDocument
        return document
    if row.kind in _WHOLE:
        return Integer()
    if row.kind == "instant":
        return UTCDateTime()
    if row.kind == "choice":
        # The first of 8, 16, 32, 64 characters its longest choice fits.
        longest = max(len(choice) for choice in row.choices)
        return String(next(width for width in (8, 16, 32, 64) if longest <= width))
    raise TypeError(f"field {row.name}: no column for kind {row.kind!r}")


def _server_default(row: ScheduleField) -> TextClause | None:
    """What rows that existed before the field hold: its default, when not null."""
    if not row.since or row.stores_null:
        return None
    value = row.default_value()
    literal = value if isinstance(value, str) else json.dumps(value)
    return text("'" + literal.replace("'", "''") + "'")
