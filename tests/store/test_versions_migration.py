"""Migrations 0020 and 0025 give every existing row and job its version 1, equal to what
the store would write for it now (so the first diff after the upgrade shows only the edit)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import uuid4

from sqlalchemy import inspect

from cronplane.core.job_versions import job_definition_of
from cronplane.core.model import Job, Schedule
from cronplane.core.versions import definition_of, diff
from cronplane.store import job_versions as job_version_store
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store import versions as version_store
from cronplane.store.database import Database
from cronplane.store.tables import jobs, schedule_state, schedules

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
            exclude=["holidays"], dst_repeat="second", timeout=90,
        ),
    ]  # fmt: skip
    with database.begin() as conn:
        # As 0019 knew the tables: insert the columns it has directly (the store now
        # writes key sets, and fields added since have no column yet).
        known = {column["name"] for column in inspect(conn).get_columns("schedules")}
        for row in rows:
            main, state = schedule_store.split_values(schedule_store.schedule_values(row))
            conn.execute(schedules.insert(), [{k: v for k, v in main.items() if k in known}])
            conn.execute(schedule_state.insert(), [{"id": row.id, "tenant": row.tenant, **state}])
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
            # What the store would write now: no field differs (one added since 0020
            # is absent from version 1, and the row keeps its value on a restore).
            assert stored is not None and diff(first.definition, definition_of(stored)) == []
            assert set(first.definition) <= set(definition_of(stored))
            assert first.definition["overrides"] == ["cron", "payload"]
            assert first.definition["end_at"] == (
                None if row.end_at is None else "2027-03-02T10:00:00+00:00"
            )
            assert (first.tenant, first.name) == (row.tenant, row.name) and not first.removed


def test_0025_gives_each_job_a_first_version(empty_database: Database) -> None:
    database = empty_database
    database.upgrade("0024")
    plain = Job(
        id=uuid4(), tenant="acme", stack="billing", name="report", title="Report", kind="python",
        status="active", payload={"n": [1, 2]}, payload_schema=None,
        target="python:billing.jobs:report", options={"timeout": 5}, source="app",
        created_at=AT, updated_at=AT, revision=3, labels={"team": "pay"},
    )  # fmt: skip
    shaped = replace(
        plain, id=uuid4(), name="hook", status="inactive", payload_schema={"type": "object"},
        target="webhook:https://example.com/h", kind="webhook", labels={},
    )  # fmt: skip
    with database.begin() as conn:
        # As 0024 knew the table: insert the columns directly (the store now writes versions).
        conn.execute(jobs.insert(), [job_store.job_values(job) for job in (plain, shaped)])
    database.upgrade()
    with database.read() as conn:
        for job in (plain, shaped):
            (first,) = job_version_store.list_versions(conn, job.id)
            assert (first.number, first.actor, first.via, first.at) == (
                1,
                "migration",
                "system",
                AT,
            )
            assert first.definition == job_definition_of(job)
            assert (first.tenant, first.stack, first.name) == (job.tenant, job.stack, job.name)
