"""Migrations and table definitions agree, and the database seam behaves per dialect."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import insert, inspect, select

from cronplane.store import claims, dialects
from cronplane.store.database import Database, alembic_config
from cronplane.store.tables import leases, metadata
from firing_support import enqueue_items, item_row


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


def queue_indexes(database: Database) -> set[str]:
    return {index["name"] for index in inspect(database.engine).get_indexes("queue_items")}


def test_0004_puts_the_claim_index_in_the_claim_order_and_back(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'claim.db'}")
    database.upgrade("0003")
    assert "ix_queue_items_claimable" in queue_indexes(database)
    database.upgrade()
    indexes = queue_indexes(database)
    assert "ix_queue_items_claim" in indexes and "ix_queue_items_claimable" not in indexes
    with database.read() as conn:
        (sql,) = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_queue_items_claim'"
        ).one()
    assert "priority DESC" in sql and "status = 'queued'" in sql
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0003")
    indexes = queue_indexes(database)
    assert "ix_queue_items_claimable" in indexes and "ix_queue_items_claim" not in indexes


def claim_plan(database: Database, *, fair: bool) -> str:
    """EXPLAIN of the claim statement (in turns by tenant or in the index's order)."""
    statement = claims._claim_statement(dialects.by_name(database.engine.dialect.name), fair)
    now = datetime(2026, 3, 2, tzinfo=UTC)
    params = {"worker": "w", "now": now, "until": now, "limit": 10, "window": 160}
    with database.begin() as conn:
        compiled = statement.compile(conn)
        bound = compiled.construct_params(params)
        if database.dialect == "sqlite":
            processors = compiled._bind_processors
            positional = tuple(
                processors[k](bound[k]) if k in processors else bound[k]
                for k in compiled.positiontup or ()
            )
            plan = [
                r[3] for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", positional)
            ]
        else:
            plan = [r[0] for r in conn.exec_driver_sql(f"EXPLAIN {compiled}", bound)]
    return "\n".join(plan)


def test_the_claim_walks_its_index_without_sorting(database: Database) -> None:
    """EXPLAIN: no sort step (SQLite's temp B-tree, PostgreSQL's Sort) in the claim."""
    text_plan = claim_plan(database, fair=False)
    assert "ix_queue_items_claim" in text_plan, text_plan
    assert "TEMP B-TREE" not in text_plan and "Sort" not in text_plan, text_plan


def test_the_claim_in_turns_reads_its_window_by_the_claim_index(database: Database) -> None:
    """In turns: the window is the claim index's first entries (its sorts are the window's)."""
    assert "ix_queue_items_claim" in claim_plan(database, fair=True)


def test_0005_adds_the_control_columns_and_the_backfill_source_and_back(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'controls.db'}")
    database.upgrade("0004")
    database.upgrade()
    columns = {column["name"] for column in inspect(database.engine).get_columns("schedules")}
    assert {"jitter", "jitter_offset", "paused_at", "paused_until", "paused_note"} <= columns
    with database.read() as conn:
        (claim,) = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_queue_items_claim'"
        ).one()
        (table,) = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'queue_items'"
        ).one()
    # The SQLite table rebuild keeps the claim index in the claim's order.
    assert "priority DESC" in claim and "status = 'queued'" in claim
    assert "'backfill'" in table
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0004")
    columns = {column["name"] for column in inspect(database.engine).get_columns("schedules")}
    assert "jitter" not in columns and "paused_at" not in columns
    assert "ix_queue_items_claim" in queue_indexes(database)


def _one_fired_item(tmp_path: Path, revision: str) -> tuple[Database, dict[str, Any]]:
    """A SQLite database at `revision` holding one fired item, and its occurrence."""
    database = Database(f"sqlite:///{tmp_path / f'at-{revision}.db'}")
    database.upgrade(revision)
    now = datetime(2026, 12, 3, 12, tzinfo=UTC)
    occurrence: dict[str, Any] = {"schedule_id": uuid4(), "scheduled_for": now}
    enqueue_items(database, [item_row(now=now, source="schedule", **occurrence)])
    return database, occurrence


def _queue_schema(database: Database) -> tuple[list[str], dict[str, str]]:
    """The occurrence key's columns in order, and every other queue_items index's SQL."""
    with database.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'queue_items'"
        ).all()
    (key,) = [
        c["column_names"]
        for c in inspect(database.engine).get_unique_constraints("queue_items")
        if c["name"] == "uq_queue_items_occurrence"
    ]
    return list(key), {name: sql for name, sql in rows if sql is not None}


def test_0012_puts_the_occurrence_key_in_time_order_keeping_items_and_indexes(
    tmp_path: Path,
) -> None:
    database, occurrence = _one_fired_item(tmp_path, "0011")
    now = occurrence["scheduled_for"]
    key, indexes = _queue_schema(database)
    assert key == ["schedule_id", "scheduled_for"]
    database.upgrade("0012")
    key_after, indexes_after = _queue_schema(database)
    assert key_after == ["scheduled_for", "schedule_id"]
    # The rebuild keeps every other index as it was (the claim index with its DESC).
    assert indexes_after == indexes
    with database.read() as conn:
        (count,) = conn.exec_driver_sql("SELECT count(*) FROM queue_items").one()
    assert count == 1
    # Still one item per occurrence.
    with pytest.raises(Exception, match="UNIQUE constraint failed"):
        enqueue_items(database, [item_row(now=now, source="schedule", **occurrence)])
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0011")
    assert _queue_schema(database) == (key, indexes)


def _schema_sql(database: Database) -> dict[str, str]:
    with database.read() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE tbl_name IN ('queue_items', 'events')"
        ).all()
    return {name: sql for name, sql in rows if sql is not None}


def test_0013_files_every_existing_row_and_puts_filed_first_in_the_schedule_indexes(
    tmp_path: Path,
) -> None:
    database, occurrence = _one_fired_item(tmp_path, "0012")
    now, schedule_id = occurrence["scheduled_for"], occurrence["schedule_id"]
    with database.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO events (code, tenant, schedule_id, actor, message, created_at, detail) "
            f"VALUES ('V200100FIRED', 'acme', '{schedule_id.hex}', 'x', 'm', '{now.isoformat()}', '{{}}')"
        )
    before = _schema_sql(database)
    database.upgrade("0013")
    with database.read() as conn:
        filed = {
            table: conn.exec_driver_sql(f"SELECT filed FROM {table}").scalars().all()
            for table in ("queue_items", "events")
        }
        plans = [
            " ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
            for sql in (
                "SELECT id FROM queue_items WHERE filed IN (0, 1) AND schedule_id = 'x' "
                "AND status = 'queued'",
                "SELECT id FROM events WHERE filed = 1 AND schedule_id = 'x' ORDER BY id DESC",
            )
        ]
    assert filed == {"queue_items": [1], "events": [1]}
    after = _schema_sql(database)
    assert "(filed, schedule_id, status)" in after["ix_queue_items_schedule"]
    assert "(filed, schedule_id, id)" in after["ix_events_schedule"]
    # Readers reach both sections by the index (no scan, no sort of a schedule's history).
    assert "INDEX ix_queue_items_schedule (filed=? AND schedule_id=? AND status=?)" in plans[0]
    assert "INDEX ix_events_schedule (filed=? AND schedule_id=?)" in plans[1]
    assert "TEMP B-TREE" not in plans[1]
    # Nothing else changed: every other index and the claim index's DESC are kept.
    changed = {name for name in before if before[name] != after.get(name)}
    assert changed == {"queue_items", "events", "ix_queue_items_schedule", "ix_events_schedule"}
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0012")
    assert _schema_sql(database).keys() == before.keys()
    assert {k: v.replace('"', "") for k, v in _schema_sql(database).items()} == {
        k: v.replace('"', "") for k, v in before.items()
    }
