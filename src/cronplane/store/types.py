"""Column types shared by every table."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import JSON, DateTime, Dialect
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator


@cache
def _zoneless(name: str) -> bool:
    """Whether dialect `name` stores timestamps without zone (store.dialects)."""
    # Imported here: the dialects' bulk encoders import this module.
    from cronplane.store import dialects

    return dialects.by_name(name).zoneless_datetimes


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that refuses naive values and always loads as aware UTC.

    SQLite keeps no zone and hands back naive datetimes; storing UTC with the
    zone stripped keeps its text ordering equal to time ordering.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: cronplane stores aware UTC only")
        value = value.astimezone(UTC)
        if _zoneless(dialect.name):
            return value.replace(tzinfo=None)
        return value

    def result_processor(self, dialect: Dialect, coltype: object) -> Any:
        if not _zoneless(dialect.name):
            return super().result_processor(dialect, coltype)

        # SQLite hands back the stored text ("2026-01-05 12:00:00.000000");
        # the C `fromisoformat` reads it several times faster than SQLAlchemy's
        # regex, which counts when a page decodes hundreds of timestamps.
        def load(value: str | None) -> datetime | None:
            return None if value is None else datetime.fromisoformat(value).replace(tzinfo=UTC)

        return load

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# JSONB on PostgreSQL (indexable, compact), plain JSON text elsewhere.
JSONDocument: Any = JSON().with_variant(JSONB(), "postgresql")
