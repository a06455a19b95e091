"""Schedule and job rows round-trip through the store on both databases."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import uuid4

from cronplane.core.model import Job, Schedule
from cronplane.core.queries import ScheduleQuery
from cronplane.core.versions import Change
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.database import Database

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
BY = Change("test", "service", NOW)


def a_schedule(name: str = "nightly", **changes: object) -> Schedule:
    schedule = Schedule(
        id=uuid4(),
        tenant="acme",
        stack="billing",
        environment="production",
        name=name,
        job="build-report",
        cron="30 2 * * *",
        timezone="Europe/London",
        payload={"kind": "daily", "nested": {"n": [1, 2]}},
        enabled=True,
        source="app",
        misfire_grace=60,
        overlap="skip",
        last_run=NOW,
        next_run=datetime(2026, 1, 6, 2, 30, tzinfo=UTC),
        created_at=NOW,
        updated_at=NOW,
        revision=1,
        declared={"cron": "30 2 * * *"},
        overrides=("payload",),
    )
    return replace(schedule, **changes)  # type: ignore[arg-type]


def test_a_schedule_round_trips(database: Database) -> None:
    schedule = a_schedule()
    with database.begin() as conn:
        assert schedule_store.insert_schedule(conn, schedule, change=BY)
    with database.read() as conn:
        loaded = schedule_store.get_by_key(conn, "acme", "billing", "production", "nightly")
        by_id = schedule_store.get_by_id(conn, "acme", schedule.id)
    assert loaded == schedule == by_id


def test_a_duplicate_key_is_an_answer_not_an_error(database: Database) -> None:
    with database.begin() as conn:
        assert schedule_store.insert_schedule(conn, a_schedule(), change=BY)
        # The transaction survives the duplicate (PostgreSQL would abort it on an error).
        assert not schedule_store.insert_schedule(conn, a_schedule(), change=BY)
        assert (
            schedule_store.insert_schedules(conn, [a_schedule(), a_schedule("other")], change=BY)
            != set()
        )
    with database.read() as conn:
        assert len(schedule_store.in_scope(conn, "acme", "billing", "production")) == 2


def test_keyset_pages_cover_every_row_once(database: Database) -> None:
    rows = [
        a_schedule(f"s{i % 7}", stack=f"st{i % 3}", environment=f"e{i % 2}", job=f"j{i % 2}")
        for i in range(42)
    ]
    unique = {(r.name, r.stack, r.environment): r for r in rows}
    with database.begin() as conn:
        schedule_store.insert_schedules(conn, list(unique.values()), change=BY)
    seen: list[tuple[str, str, str]] = []
    after = None
    with database.read() as conn:
        while True:
            page = schedule_store.list_page(conn, "acme", ScheduleQuery(), after=after, limit=5)
            if not page:
                break
            seen.extend((r.name, r.stack, r.environment) for r in page)
            last = page[-1]
            after = (last.name, last.stack, last.environment)
        assert seen == sorted(unique)
        only = schedule_store.list_page(conn, "acme", ScheduleQuery(stack="st1", job="j1"))
    assert {r.stack for r in only} == {"st1"} and {r.job for r in only} == {"j1"}


def a_job(name: str = "send-invoices", **changes: object) -> Job:
    job = Job(
        id=uuid4(),
        tenant="acme",
        stack="billing",
        name=name,
        title="Send",
        kind="python",
        status="active",
        payload={"batch": 100},
        payload_schema={"type": "object"},
        target="python:billing.jobs:send",
        options={},
        source="app",
        created_at=NOW,
        updated_at=NOW,
        revision=1,
    )
    return replace(job, **changes)  # type: ignore[arg-type]


def test_a_job_round_trips(database: Database) -> None:
    job = a_job()
    with database.begin() as conn:
        assert job_store.insert_job(conn, job, change=BY)
        assert not job_store.insert_job(conn, replace(job, id=uuid4()), change=BY)
    with database.read() as conn:
        assert job_store.get_job(conn, "acme", "billing", "send-invoices") == job
        assert job_store.list_jobs(conn, "acme") == [job]


def test_jobs_are_read_by_key_in_one_statement(database: Database) -> None:
    # The worker reads a claim's jobs this way: each key to its own job, a key with no
    # job left out, the same name in another tenant or stack kept apart.
    stored = [a_job("a"), a_job("a", stack="ops"), a_job("a", tenant="globex")]
    with database.begin() as conn:
        for one in stored:
            assert job_store.insert_job(conn, one, change=BY)
    keys = [("acme", "billing", "a"), ("globex", "billing", "a"), ("acme", "billing", "gone")]
    with database.read() as conn:
        found = job_store.jobs_by_key(conn, [*keys, keys[0]])
        assert job_store.jobs_by_key(conn, []) == {}
    assert found == {keys[0]: stored[0], keys[1]: stored[2]}
