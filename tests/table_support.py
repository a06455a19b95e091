"""Emptying a test database: every row gone, the schema kept."""

from __future__ import annotations

from sqlalchemy import text

from cronplane.store.database import Database
from cronplane.store.tables import metadata


def empty_tables(database: Database) -> None:
    """Remove every row (not the schema) so each test starts clean."""
    names = ", ".join(table.name for table in metadata.sorted_tables)
    with database.begin() as conn:
        conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY"))
