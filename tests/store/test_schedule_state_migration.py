"""Migration 0014 carries each schedule's enabled, next_run, last_run and
run_count into schedule_state, and its downgrade carries them back."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from alembic import command
from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, Uuid, insert, select

from cronplane.store.database import Database, alembic_config
from cronplane.store.schedules import get_by_id
from cronplane.store.types import JSONDocument, UTCDateTime

LAST = datetime(2026, 3, 2, 10, tzinfo=UTC)
NEXT = datetime(2026, 3, 2, 10, 5, tzinfo=UTC)

# `schedules` as 0013 left it: the columns these rows set.
OLD = Table(
    "schedules",
    MetaData(),
    Column("id", Uuid),
    *(Column(name, String) for name in ("tenant", "stack", "environment", "name", "job")),
    *(Column(name, String) for name in ("cron", "timezone", "source", "overlap")),
    Column("payload", JSONDocument),
    Column("overrides", JSONDocument),
    Column("enabled", Boolean),
    Column("last_run", UTCDateTime),
    Column("next_run", UTCDateTime),
    Column("created_at", UTCDateTime),
    Column("updated_at", UTCDateTime),
    Column("revision", Integer),
    Column("run_count", Integer),
)


def old_row(name: str, *, enabled: bool, run_count: int) -> dict[str, object]:
    return {
        "id": uuid4(), "tenant": "acme", "stack": "default", "environment": "default",
        "name": name, "job": "job", "cron": "*/5 * * * *", "timezone": "UTC", "source": "user",
        "overlap": "skip", "payload": {}, "overrides": [], "enabled": enabled,
        "last_run": LAST, "next_run": NEXT if enabled else None, "created_at": LAST,
        "updated_at": LAST, "revision": 3, "run_count": run_count,
    }  # fmt: skip


def test_0014_carries_each_schedules_state_over_and_back(empty_database: Database) -> None:
    database = empty_database
    database.upgrade("0013")
    rows = [old_row("on", enabled=True, run_count=5), old_row("off", enabled=False, run_count=4)]
    with database.begin() as conn:
        conn.execute(insert(OLD), rows)
    database.upgrade()
    with database.read() as conn:
        found = {row["name"]: get_by_id(conn, "acme", UUID(str(row["id"]))) for row in rows}
    on, off = found["on"], found["off"]
    assert on is not None and off is not None
    assert (on.enabled, on.next_run, on.last_run, on.run_count, on.revision) == (
        True, NEXT, LAST, 5, 3,
    )  # fmt: skip
    assert (off.enabled, off.next_run, off.last_run, off.run_count) == (False, None, LAST, 4)
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0013")
    columns = (OLD.c.name, OLD.c.enabled, OLD.c.next_run, OLD.c.last_run, OLD.c.run_count)
    with database.read() as conn:
        back = {row[0]: tuple(row) for row in conn.execute(select(*columns))}
    assert back == {
        "on": ("on", True, NEXT, LAST, 5),
        "off": ("off", False, None, LAST, 4),
    }
