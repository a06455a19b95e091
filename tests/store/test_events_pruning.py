"""Migration 0003 (no index on events.created_at) and pruning events by id range."""

from __future__ import annotations

from datetime import timedelta

from alembic import command
from sqlalchemy import func, inspect, select

from cronplane import events as ev
from cronplane.store import queue
from cronplane.store.database import Database, alembic_config
from cronplane.store.events import append_events, event_values
from cronplane.store.tables import events
from firing_support import START


def event_indexes(database: Database) -> set[str]:
    return {index["name"] for index in inspect(database.engine).get_indexes("events")}


def downgrade(database: Database, revision: str) -> None:
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), revision)


def test_0003_from_empty_from_0002_and_back(empty_database: Database) -> None:
    empty_database.upgrade("0002")
    assert "ix_events_created" in event_indexes(empty_database)
    with empty_database.begin() as conn:
        append_events(
            conn, [event_values(ev.SCHEDULE_FIRED, tenant="t", actor="a", message="m", now=START)]
        )
    empty_database.upgrade("0003")
    assert empty_database.current_revision() == "0003"
    assert event_indexes(empty_database) == {"ix_events_schedule", "ix_events_tenant"}
    downgrade(empty_database, "0002")
    assert empty_database.current_revision() == "0002"
    assert "ix_events_created" in event_indexes(empty_database)
    empty_database.upgrade()
    with empty_database.read() as conn:
        assert conn.execute(select(func.count()).select_from(events)).scalar() == 1


def add_event(database: Database, days_ago: float) -> None:
    with database.begin() as conn:
        append_events(
            conn,
            [
                event_values(
                    ev.SCHEDULE_FIRED,
                    tenant="acme",
                    actor="test",
                    message=f"{days_ago} days ago",
                    now=START - timedelta(days=days_ago),
                )
            ],
        )


def messages(database: Database) -> list[str]:
    with database.read() as conn:
        return list(conn.execute(select(events.c.message).order_by(events.c.id)).scalars())


def test_prune_deletes_the_old_prefix_of_the_events(database: Database) -> None:
    for days_ago in (45, 40, 31, 29, 1):
        add_event(database, days_ago)
    with database.begin() as conn:
        assert queue.prune(conn, START - timedelta(days=30)) == (0, 3)
    assert messages(database) == ["29 days ago", "1 days ago"]
    # Nothing new: everything old goes, with no event to bound the range.
    with database.begin() as conn:
        assert queue.prune(conn, START) == (0, 2)
    assert messages(database) == []


def test_an_event_written_out_of_time_order_waits_for_a_later_prune(database: Database) -> None:
    for days_ago in (40, 1, 35, 0.5):
        add_event(database, days_ago)
    with database.begin() as conn:
        assert queue.prune(conn, START - timedelta(days=30)) == (0, 1)
    # The 35-day-old event sits after a recent one; it is never deleted early
    # and goes once the events before it are old too.
    assert messages(database) == ["1 days ago", "35 days ago", "0.5 days ago"]
    with database.begin() as conn:
        assert queue.prune(conn, START - timedelta(hours=13)) == (0, 2)
    assert messages(database) == ["0.5 days ago"]


def test_sqlite_prunes_by_the_primary_key(sqlite_database: Database) -> None:
    with sqlite_database.read() as conn:
        lookup = conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN SELECT id FROM events WHERE created_at >= ? ORDER BY id LIMIT 1",
            ("2026-01-01 00:00:00.000000",),
        ).all()
        range_delete = conn.exec_driver_sql(
            "EXPLAIN QUERY PLAN DELETE FROM events WHERE created_at < ? AND id < ?",
            ("2026-01-01 00:00:00.000000", 10),
        ).all()
    # The lookup walks the table in id order (no sort), the delete is a rowid range.
    assert [row[-1] for row in lookup] == ["SCAN events"]
    assert [row[-1] for row in range_delete] == [
        "SEARCH events USING INTEGER PRIMARY KEY (rowid<?)"
    ]
