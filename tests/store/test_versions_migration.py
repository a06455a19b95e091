"""Migration 0020 gives every existing row its version 1, equal to what the store
would write for it now (so the first diff after the upgrade shows only the edit)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import uuid4

from cronplane.core.model import Schedule
from cronplane.core.versions import definition_of
from cronplane.store import schedules as schedule_store
from cronplane.store import versions as version_store
from cronplane.store.database import Database

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)


def a_row(name: str, **changes: object) -> Schedule:
    row = Schedule(
        id=uuid4(), tenant="acme", stack="billing", environment="prod", name=name,
        job="report", cron="30 2 * * *", timezone="Europe/London", payload={"n": [1, 2]},
        enabled=True, source="app", misfire_grace=60, overlap="skip", last_run=None,
        next_run=AT, created_at=AT, updated_at=AT, revision=4, declared={"cron": "30 2 * * *"},
        overrides=("payload", "cron"),
    )  # fmt: skip
    return replace(row, **changes)  # type: ignore[arg-type]


def test_0020_gives_each_row_a_first_version(empty_database: Database) -> None:
    database = empty_database
    database.upgrade("0019")
    rows = [
        a_row("plain"),
        a_row(
            "shaped", enabled=False, start_at=AT, end_at=AT.replace(year=2027), max_runs=5,
            jitter=30, paused_at=AT, paused_note="hold", paused_missed="once",
            labels={"team": "pay"},
            exclude=["holidays"], dst_repeat="twice", timeout=90,
        ),
    ]  # fmt: skip
    with database.begin() as conn:
        schedule_store.insert_rows(conn, [schedule_store.schedule_values(row) for row in rows])
    database.upgrade()
    with database.read() as conn:
        for row in rows:
            (first,) = version_store.list_versions(conn, row.id)
            assert first.number == 1 and (first.actor, first.via, first.at) == (
                "migration",
                "system",
                AT,
            )
            stored = schedule_store.get_by_id(conn, row.tenant, row.id)
            assert stored is not None and first.definition == definition_of(stored)
            assert first.definition["overrides"] == ["cron", "payload"]
            assert first.definition["end_at"] == (
                None if row.end_at is None else "2027-03-02T10:00:00+00:00"
            )
            assert (first.tenant, first.name) == (row.tenant, row.name) and not first.removed
