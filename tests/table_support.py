"""Test tables: emptying a database (every row gone, the schema kept), a bare schedule."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

from sqlalchemy import text

from cronplane.core.model import Schedule
from cronplane.store.database import Database
from cronplane.store.tables import metadata


def empty_tables(database: Database) -> None:
    """Remove every row (not the schema) so each test starts clean."""
    names = ", ".join(table.name for table in metadata.sorted_tables)
    with database.begin() as conn:
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY"))


def bare_schedule(at: datetime = datetime(2026, 12, 8, tzinfo=UTC)) -> Schedule:
    """A user schedule `acme/default/default/n` made at `at`, every setting at its default."""
    return Schedule(
        id=uuid4(), tenant="acme", stack="default", environment="default", name="n",
        job="j", cron="0 * * * *", timezone="UTC", payload={}, enabled=True, source="user",
        last_run=None, next_run=None, created_at=at, updated_at=at, revision=1,
        declared=None, overrides=(),
    )  # fmt: skip
