"""Migrations and table definitions agree, and the database seam behaves per dialect."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import insert, select

from cronplane.store.database import Database
from cronplane.store.tables import leases, metadata


def test_migrations_match_the_table_definitions(database: Database) -> None:
    with database.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, metadata)
    assert diff == [], f"migrations and tables.py disagree: {diff}"
    assert database.is_current()


def test_an_empty_sqlite_file_migrates_itself(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'new.db'}")
    assert database.current_revision() is None
    database.ensure_schema()
    assert database.is_current()
    assert {"schedules", "jobs", "events", "queue_items", "leases", "api_tokens"} <= set(
        database.table_names()
    )


def test_datetimes_come_back_aware_utc_and_naive_ones_are_refused(database: Database) -> None:
    moment = datetime(2026, 3, 8, 2, 30, tzinfo=UTC) + timedelta(microseconds=7)
    with database.begin() as conn:
        conn.execute(insert(leases).values(name="g", term=1, expires_at=moment))
    with database.read() as conn:
        loaded = conn.execute(select(leases.c.expires_at)).scalar_one()
    assert loaded == moment and loaded.tzinfo is not None and loaded.utcoffset() == timedelta(0)
    with pytest.raises(Exception, match="naive"), database.begin() as conn:
        conn.execute(insert(leases).values(name="h", term=1, expires_at=datetime(2026, 1, 1)))


def test_a_failed_transaction_writes_nothing(database: Database) -> None:
    with pytest.raises(RuntimeError), database.begin() as conn:
        conn.execute(insert(leases).values(name="g", term=1))
        raise RuntimeError("boom")
    with database.read() as conn:
        assert conn.execute(select(leases)).all() == []


def test_database_clock_is_aware_utc(database: Database) -> None:
    now = database.now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
