"""Concurrent single creates: each request gets its own answer; requests share transactions."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from api_support import START, bearer, seed_tenant
from live_server import serving
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from cronplane.api.grouping import CreateGroups
from cronplane.clock import FakeClock, SystemClock
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Schedule, Scope
from cronplane.errors import CronRejected, ScheduleExists
from cronplane.service import NewSchedule, ScheduleService
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database
from cronplane.store.tables import schedules

SCOPE = Scope("acme", "billing", "prod")


def test_creates_that_arrive_together_commit_once_and_answer_each(database: Database) -> None:
    commits: list[int] = []
    service = ScheduleService(database, FakeClock(START), on_change=lambda: commits.append(1))
    seed_tenant(service, "acme")
    commits.clear()
    groups = CreateGroups(service)
    specs = [ScheduleSpec(job="report", cron="*/5 * * * *", name=f"s{n}") for n in range(8)]
    specs += [
        ScheduleSpec(job="report", cron="*/5 * * * *", name="s0"),  # taken earlier in the group
        ScheduleSpec(job="report", cron="* * * * * *", name="secs"),  # six fields: refused
    ]

    async def all_at_once() -> list[Schedule | BaseException]:
        return await asyncio.gather(
            *(groups.create(NewSchedule(SCOPE, spec, "ann")) for spec in specs),
            return_exceptions=True,
        )

    answers = asyncio.run(all_at_once())

    assert [a.name for a in answers[:8] if isinstance(a, Schedule)] == [f"s{n}" for n in range(8)]
    assert isinstance(answers[8], ScheduleExists)
    assert isinstance(answers[9], CronRejected)
    assert commits == [1]  # one transaction for the ten requests
    with database.read() as conn:
        stored = conn.execute(select(func.count()).where(schedules.c.name.like("s%"))).scalar()
    assert stored == 8


def test_a_failed_group_transaction_fails_every_request_in_it(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))
    seed_tenant(service, "acme")
    with database.begin() as conn:
        conn.execute(text("ALTER TABLE events RENAME TO events_away"))  # the event insert fails
    groups = CreateGroups(service)

    async def two() -> list[Schedule | BaseException]:
        return await asyncio.gather(
            *(
                groups.create(
                    NewSchedule(SCOPE, ScheduleSpec(job="report", cron="@daily", name=n), "a")
                )
                for n in ("x", "y")
            ),
            return_exceptions=True,
        )

    try:
        answers = asyncio.run(two())
    finally:
        with database.begin() as conn:
            conn.execute(text("ALTER TABLE events_away RENAME TO events"))
    assert all(isinstance(answer, DBAPIError) for answer in answers)
    with database.read() as conn:  # rolled back together: neither schedule exists
        assert conn.execute(select(func.count()).select_from(schedules)).scalar() == 1


def test_concurrent_http_creates_each_get_their_own_answer(database: Database) -> None:
    service = ScheduleService(database, SystemClock())
    seed_tenant(service, "acme")
    secret = TokenService(Context(database, SystemClock())).create(
        tenant="acme", role="admin", actor="t"
    )
    bodies = [{"job": "report", "cron": "*/5 * * * *", "name": f"c{n}"} for n in range(30)]
    bodies += [{"job": "report", "cron": "*/5 * * * *", "name": "c7"}] * 5
    bodies += [{"job": "report", "cron": "61 * * * *", "name": f"bad{n}"} for n in range(5)]
    bodies += [{"job": "nope", "cron": "@daily", "name": f"orphan{n}"} for n in range(5)]

    with serving(database) as base:
        url = f"{base}/api/v1/tenants/acme/schedules"

        def post(body: dict[str, str]) -> tuple[int, dict[str, object]]:
            with httpx.Client(headers=bearer(secret.secret), timeout=30) as client:
                answer = client.post(url, json={**body, "stack": "billing", "environment": "prod"})
                return answer.status_code, answer.json()

        with ThreadPoolExecutor(max_workers=16) as pool:
            answers = list(pool.map(post, bodies))

    created = [body for status, body in answers if status == 201]
    assert sorted(str(body["name"]) for body in created) == sorted(f"c{n}" for n in range(30))
    codes = sorted(str(body["code"]) for status, body in answers if status != 201)
    assert codes == ["X400001CRNINV"] * 5 + ["X404903JOBNFD"] * 5 + ["X409900SCHDPL"] * 5
    with database.read() as conn:
        rows = {row.name: str(row.id) for row in conn.execute(select(schedules))}
    # Every 201 is committed, with the id it answered.
    assert all(rows[str(body["name"])] == body["id"] for body in created)
    assert len(rows) == 31  # 30 + the seeded nightly


@pytest.mark.parametrize("size", [1, 3])
def test_a_group_is_never_larger_than_its_bound(database: Database, size: int) -> None:
    transactions: list[int] = []
    service = ScheduleService(database, FakeClock(START), on_change=lambda: transactions.append(1))
    seed_tenant(service, "acme")
    transactions.clear()
    groups = CreateGroups(service, max_group=size)

    async def seven() -> None:
        await asyncio.gather(
            *(
                groups.create(
                    NewSchedule(SCOPE, ScheduleSpec(job="report", cron="@daily", name=f"g{n}"), "a")
                )
                for n in range(7)
            )
        )

    asyncio.run(seven())
    assert len(transactions) == -(-7 // size)
