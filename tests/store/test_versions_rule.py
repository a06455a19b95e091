"""The rule of docs/architecture.md, "every definition change writes a version in the
same transaction", held in three ways:

- only store/schedules.py writes `schedules` rows, and there every write of a
  definition takes its Change and writes the version (the fire path's two writes,
  a disable on a computation failure and an auto-resume, are the named exception);
- a definition write without its Change is refused, before anything is written;
- a version is part of its transaction: rolled back with it.

tests/service/test_versions.py drives each kind of change through the service.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, func, select

from cronplane.core.inputs import Declared
from cronplane.core.model import Job, Schedule, Scope, new_schedule
from cronplane.core.versions import Change
from cronplane.ids import time_ordered_id
from cronplane.store import job_versions as job_version_store
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.database import Database
from cronplane.store.tables import schedule_versions

SRC = Path(__file__).resolve().parents[2] / "src" / "cronplane"
WRITES = re.compile(
    r"update\(\s*schedules\b|schedules\.insert\(|delete\(\s*schedules\b|insert\(\s*schedules\b"
    r"|UPDATE schedules\b|INSERT INTO schedules\b|DELETE FROM schedules\b"
    r"|update_in\(\s*conn,\s*schedules\b"
)
# The fire path's own writes (store.dispatch): a decision that disables a row on a
# computation failure, or ends a pause at its `until`. Not versioned yet (docs/architecture.md).
FIRE_PATH = {"store/dispatch/sqlite.py", "store/dispatch/postgresql.py"}
AT = datetime(2026, 1, 5, 12, tzinfo=UTC)
BY = Change("ann", "service", AT)


def test_only_the_schedule_store_writes_schedule_rows() -> None:
    writers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if "migrations" not in path.parts and WRITES.search(path.read_text())
    }
    assert writers == {"store/schedules.py", *FIRE_PATH}


def _row(name: str = "nightly") -> Schedule:
    return new_schedule(
        Scope("acme", "billing", "prod"),
        name,
        Declared("report", "0 2 * * *", "UTC", {}),
        schedule_id=time_ordered_id(AT),
        source="user",
        now=AT,
        next_run=None,
    )


def _versions(database: Database) -> int:
    with database.read() as conn:
        return int(conn.execute(select(func.count()).select_from(schedule_versions)).scalar_one())


def test_a_definition_write_needs_its_change(database: Database) -> None:
    row = _row()
    with database.begin() as conn:
        schedule_store.insert_schedule(conn, row, change=BY)
    with pytest.raises(ValueError, match="Change"), database.begin() as conn:
        schedule_store.update_schedule(conn, row.id, {"cron": "0 3 * * *", "revision": 2})
    with database.read() as conn:
        stored = schedule_store.get_by_id(conn, "acme", row.id)
    assert stored is not None and stored.cron == "0 2 * * *" and _versions(database) == 1
    # Bookkeeping that is not a definition (a state column) needs none, and makes none.
    with database.begin() as conn:
        assert schedule_store.update_schedule(conn, row.id, {"next_run": AT})
    assert _versions(database) == 1


def test_a_version_is_rolled_back_with_its_transaction(database: Database) -> None:
    row = _row()
    with database.begin() as conn:
        schedule_store.insert_schedule(conn, row, change=BY)
    with pytest.raises(RuntimeError), database.begin() as conn:
        values = {"cron": "0 3 * * *", "revision": 2, "updated_at": AT}
        schedule_store.update_schedule(conn, row.id, values, change=BY)
        assert _count_in(conn) == 2
        raise RuntimeError("the use case fails after the write")
    assert _versions(database) == 1
    with pytest.raises(RuntimeError), database.begin() as conn:
        schedule_store.delete_schedules(conn, [row.id], change=BY)
        raise RuntimeError("and after a delete")
    assert _versions(database) == 1


def _count_in(conn: Connection) -> int:
    query = select(func.count()).select_from(schedule_versions)
    return int(conn.execute(query).scalar_one())


JOB_WRITES = re.compile(
    r"update\(\s*jobs\b|jobs\.insert\(|delete\(\s*jobs\b|insert\(\s*jobs\b"
    r"|UPDATE jobs\b|INSERT INTO jobs\b|DELETE FROM jobs\b"
)


def test_only_the_job_store_writes_job_rows() -> None:
    """The same rule for jobs (store.job_versions): store/jobs.py is their only writer,
    and its insert and update take the Change (a required keyword)."""
    writers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if "migrations" not in path.parts and JOB_WRITES.search(path.read_text())
    }
    assert writers == {"store/jobs.py"}


def test_a_job_version_is_rolled_back_with_its_transaction(database: Database) -> None:
    job = Job(
        id=time_ordered_id(AT), tenant="acme", stack="billing", name="report", title="",
        kind="python", status="active", payload={}, payload_schema=None,
        target="python:billing.jobs:report", options={}, source="user", created_at=AT,
        updated_at=AT, revision=1,
    )  # fmt: skip
    with database.begin() as conn:
        assert job_store.insert_job(conn, job, change=BY)
    with pytest.raises(RuntimeError), database.begin() as conn:
        values = {"title": "New", "revision": 2, "updated_at": AT}
        assert job_store.update_job(conn, job, values, change=BY, expected_revision=1)
        assert len(job_version_store.list_versions(conn, job.id)) == 2
        raise RuntimeError("the use case fails after the write")
    with database.read() as conn:
        assert [v.number for v in job_version_store.list_versions(conn, job.id)] == [1]
    # A stale revision writes neither the job nor a version.
    with database.begin() as conn:
        assert (
            job_store.update_job(conn, job, {"title": "x"}, change=BY, expected_revision=7) is None
        )
    with database.read() as conn:
        assert len(job_version_store.list_versions(conn, job.id)) == 1
