"""Group commit of creates: many single creates in one transaction, each judged on its own.

The invariant: `create_schedules(batch)` answers, item by item, exactly what
the same creates made one after another with `create_schedule` answer — the
same schedule or the same coded error — and leaves the same rows and the same
events. One bad item never costs the others their write.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from cronplane import events
from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Schedule, Scope
from cronplane.errors import CronplaneError, InvalidName, JobNotFound, ScheduleExists
from cronplane.service import NewSchedule, ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import events as events_table
from service_support import START

_tenants = itertools.count()

specs = st.builds(
    ScheduleSpec,
    job=st.sampled_from(["report", "typed", "dormant", "missing"]),
    cron=st.sampled_from(["*/5 * * * *", "0 9 * * MON", "61 * * * *", "@daily", "0 0 31 2 *"]),
    name=st.sampled_from(["a", "b", "c", "bad name", None]),
    timezone=st.sampled_from(["UTC", "Europe/Paris", "Mars/Olympus"]),
    payload=st.sampled_from([None, {}, {"batch": 2}, {"batch": "two"}]),
    misfire_grace=st.sampled_from([None, 60, -1]),
)
requests = st.lists(
    st.tuples(st.sampled_from(["billing", "ops"]), specs),
    min_size=1,
    max_size=12,
)


def fresh_tenant(service: ScheduleService) -> str:
    """A tenant of its own per example, with the jobs the strategies name."""
    tenant = f"t{next(_tenants)}"
    for stack in ("billing", "ops"):
        service.register_job(
            tenant, stack, JobSpec(name="report", target="python:m:f"), actor="test"
        )
        service.register_job(
            tenant,
            stack,
            JobSpec(
                name="typed",
                target="python:m:g",
                payload={"batch": 1},
                payload_schema={"type": "object", "properties": {"batch": {"type": "integer"}}},
            ),
            actor="test",
        )
        service.register_job(
            tenant, stack, JobSpec(name="dormant", target="python:m:h"), actor="test"
        )
        service.deactivate_job(tenant, stack, "dormant", actor="test")
    return tenant


def outcome(result: Schedule | CronplaneError) -> tuple[Any, ...]:
    """What a caller sees, without the tenant, ids and timestamps."""
    if isinstance(result, CronplaneError):
        return ("error", result.code.text)
    row = result.to_dict()
    for key in ("id", "tenant", "created_at", "updated_at", "last_run"):
        row.pop(key)
    return ("created", sorted(row.items(), key=lambda item: item[0]))


def sequential(service: ScheduleService, batch: list[NewSchedule]) -> list[Any]:
    answers: list[Any] = []
    for request in batch:
        try:
            answers.append(
                outcome(service.create_schedule(request.scope, request.spec, actor=request.actor))
            )
        except CronplaneError as error:
            answers.append(outcome(error))
    return answers


def event_codes(database: Database, tenant: str) -> list[tuple[str, str | None]]:
    with database.read() as conn:
        query = (
            select(events_table.c.code, events_table.c.schedule_name)
            .where(events_table.c.tenant == tenant, events_table.c.actor != "test")
            .order_by(events_table.c.id)
        )
        return [(row.code, row.schedule_name) for row in conn.execute(query)]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=requests)
def test_a_group_answers_and_writes_what_one_by_one_creates_would(
    database: Database, batch: list[tuple[str, ScheduleSpec]]
) -> None:
    service = ScheduleService(database, FakeClock(START))
    one_by_one, grouped = fresh_tenant(service), fresh_tenant(service)

    expected = sequential(
        service,
        [NewSchedule(Scope(one_by_one, stack, "prod"), spec, "ann") for stack, spec in batch],
    )
    got = service.create_schedules(
        [NewSchedule(Scope(grouped, stack, "prod"), spec, "ann") for stack, spec in batch]
    )

    assert [outcome(result) for result in got] == expected
    assert event_codes(database, grouped) == event_codes(database, one_by_one)


def test_one_bad_item_costs_the_others_nothing(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))
    tenant = fresh_tenant(service)
    scope = Scope(tenant, "billing", "prod")
    good = ScheduleSpec(job="report", cron="*/5 * * * *", name="good")

    results = service.create_schedules(
        [
            NewSchedule(scope, good, "ann"),
            NewSchedule(
                scope, ScheduleSpec(job="report", cron="* * * * *", name="bad name"), "ann"
            ),
            NewSchedule(scope, ScheduleSpec(job="gone", cron="* * * * *", name="x"), "ann"),
            NewSchedule(scope, good, "bob"),  # the same key, later in the same group
            NewSchedule(scope, ScheduleSpec(job="report", cron="@hourly", name="other"), "ann"),
        ]
    )

    assert isinstance(results[0], Schedule) and results[0].name == "good"
    assert isinstance(results[1], InvalidName)
    assert isinstance(results[2], JobNotFound)
    assert isinstance(results[3], ScheduleExists)
    assert isinstance(results[4], Schedule) and results[4].next_run is not None
    assert [name for _, name in event_codes(database, tenant)] == ["good", "other"]
    assert {code for code, _ in event_codes(database, tenant)} == {events.SCHEDULE_CREATED.text}


def test_a_group_calls_on_change_once_after_its_commit(database: Database) -> None:
    calls: list[int] = []

    def on_change() -> None:
        with database.read() as conn:
            calls.append(conn.execute(select(func.count()).select_from(events_table)).scalar_one())

    service = ScheduleService(database, FakeClock(START), on_change=on_change)
    tenant = fresh_tenant(service)
    calls.clear()
    scope = Scope(tenant, "billing", "prod")
    service.create_schedules(
        [
            NewSchedule(scope, ScheduleSpec(job="report", cron="@daily", name=n), "ann")
            for n in "xyz"
        ]
    )
    assert len(calls) == 1  # once, and the three rows were already committed when it ran
    with database.read() as conn:
        assert conn.execute(select(func.count()).select_from(events_table)).scalar_one() == calls[0]
