"""Schedules that come to an end, through the service and Dispatcher.tick(), with a fake
clock, on SQLite and PostgreSQL: max_runs, the active window, one-off schedules.

Rows are created by the service (so the real parser, zones and first-run rules
apply) and fired by the dispatcher with the real occurrence function.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import CronRejected
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import items, ledger

START = datetime(2026, 3, 2, 10, 0, 30, tzinfo=UTC)
SCOPE = Scope("acme")
_names = itertools.count()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def service(database: Database, clock: FakeClock) -> ScheduleService:
    svc = ScheduleService(database, clock)
    svc.register_job("acme", "default", JobSpec(name="job", target="python:h:ok"), actor="t")
    return svc


def node(database: Database, clock: FakeClock, holder: str = "node-a") -> Dispatcher:
    return Dispatcher(database, clock, holder=holder, ttl=10)


def create(service: ScheduleService, cron: str, **spec: object) -> str:
    name = f"s{next(_names)}"
    values: dict[str, object] = {"overlap": "allow", **spec}
    service.create_schedule(
        SCOPE, ScheduleSpec(job="job", cron=cron, name=name, **values), actor="t"
    )  # type: ignore[arg-type]
    return name


def run_until(dispatcher: Dispatcher, clock: FakeClock, until: datetime, step: float = 60) -> None:
    """Tick every `step` seconds of fake time up to `until`."""
    while clock.now() < until:
        clock.advance(step)
        dispatcher.tick()


def codes(database: Database, service: ScheduleService, name: str) -> list[str]:
    return [event.code for event in ledger(database, service.get_schedule(SCOPE, name).id)]


def test_max_runs_fires_n_times_then_ends(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "* * * * *", max_runs=3)
    assert service.get_schedule(SCOPE, name).runs_left == 3
    run_until(node(database, clock), clock, START + timedelta(minutes=10))
    row = service.get_schedule(SCOPE, name)
    fired = items(database, row.id)
    assert [i.scheduled_for for i in fired] == [
        START.replace(second=0) + timedelta(minutes=n) for n in (1, 2, 3)
    ]
    assert row.enabled and row.next_run is None and row.run_count == 3 and row.runs_left == 0
    assert row.state == "ended" and row.to_dict()["state"] == "ended"
    assert codes(database, service, name)[-2:] == [ev.SCHEDULE_FIRED.text, ev.SCHEDULE_ENDED.text]
    assert ledger(database, row.id)[-1].detail["reason"] == "max_runs"


def test_skips_do_not_count_as_runs(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    # overlap skip with the first item never taken: every later occurrence is skipped.
    name = create(service, "* * * * *", max_runs=2, overlap="skip")
    run_until(node(database, clock), clock, START + timedelta(minutes=5))
    row = service.get_schedule(SCOPE, name)
    assert len(items(database, row.id)) == 1 and row.run_count == 1
    assert row.state == "active" and row.next_run is not None
    assert codes(database, service, name).count(ev.SKIPPED_OVERLAP.text) == 4


def test_window_no_fire_before_start_or_after_end(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    start_at = START + timedelta(minutes=10)
    end_at = START.replace(second=0) + timedelta(minutes=13)
    name = create(service, "* * * * *", start_at=start_at, end_at=end_at)
    row = service.get_schedule(SCOPE, name)
    # The first occurrence is computed from max(now, start_at).
    assert row.next_run == START.replace(second=0) + timedelta(minutes=11)
    run_until(node(database, clock), clock, START + timedelta(minutes=30))
    row = service.get_schedule(SCOPE, name)
    assert [i.scheduled_for for i in items(database, row.id)] == [
        START.replace(second=0) + timedelta(minutes=n) for n in (11, 12, 13)
    ]
    assert row.state == "ended" and row.enabled and row.next_run is None
    assert ledger(database, row.id)[-1].detail["reason"] == "end_at"


def test_one_off_fires_once_then_is_done(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    # 12:00 in Berlin (UTC+1 in March before the switch) is 11:00 UTC.
    name = create(service, "once at 2026-03-02T12:00", timezone="Europe/Berlin")
    row = service.get_schedule(SCOPE, name)
    assert row.cron == "@once 2026-03-02T12:00"
    assert row.next_run == datetime(2026, 3, 2, 11, 0, tzinfo=UTC) and row.state == "active"
    dispatcher = node(database, clock)
    run_until(dispatcher, clock, datetime(2026, 3, 2, 10, 59, tzinfo=UTC))
    assert items(database, row.id) == []
    run_until(dispatcher, clock, datetime(2026, 3, 2, 14, 0, tzinfo=UTC))
    (item,) = items(database, row.id)
    assert item.scheduled_for == datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
    row = service.get_schedule(SCOPE, name)
    assert row.state == "done" and row.next_run is None and row.enabled and row.run_count == 1
    assert codes(database, service, name)[-2:] == [ev.SCHEDULE_FIRED.text, ev.SCHEDULE_ENDED.text]
    # Enabling a done one-off recomputes and it stays done.
    service.disable_schedule(SCOPE, name, actor="t")
    assert service.enable_schedule(SCOPE, name, actor="t").state == "done"


def test_one_off_fires_exactly_once_across_takeover_and_restart(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "once at 2026-03-02T10:05")
    a = node(database, clock)
    assert a.tick().leader
    clock.set(datetime(2026, 3, 2, 10, 5, tzinfo=UTC))
    assert a.tick().fired == 1
    # a dies; b takes over after the lease; a comes back as a new process.
    clock.advance(11)
    b = node(database, clock, "node-b")
    restarted = node(database, clock)
    for _ in range(5):
        clock.advance(60)
        assert b.tick().fired == 0 and restarted.tick().fired == 0
    row = service.get_schedule(SCOPE, name)
    assert len(items(database, row.id)) == 1 and row.state == "done"
    assert codes(database, service, name).count(ev.SCHEDULE_FIRED.text) == 1


def test_one_off_with_the_dispatcher_down_fires_once_late(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "once at 2026-03-02T10:05")
    clock.set(datetime(2026, 3, 2, 13, 0, tzinfo=UTC))  # down over the instant
    report = node(database, clock).tick()
    assert report.fired == 1
    row = service.get_schedule(SCOPE, name)
    (item,) = items(database, row.id)
    assert item.scheduled_for == datetime(2026, 3, 2, 10, 5, tzinfo=UTC)
    assert row.state == "done"


def test_one_off_past_its_misfire_grace_is_skipped_and_done(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "once at 2026-03-02T10:05", misfire_grace=60)
    clock.set(datetime(2026, 3, 2, 10, 7, tzinfo=UTC))
    report = node(database, clock).tick()
    assert report.fired == 0 and report.counts[Outcome.SKIPPED_MISFIRE] == 1
    row = service.get_schedule(SCOPE, name)
    assert items(database, row.id) == [] and row.state == "done" and row.run_count == 0
    assert codes(database, service, name)[-2:] == [
        ev.SKIPPED_MISFIRE.text,
        ev.SCHEDULE_ENDED.text,
    ]


def test_raising_max_runs_or_moving_end_at_revives_an_ended_row(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "* * * * *", max_runs=1)
    dispatcher = node(database, clock)
    run_until(dispatcher, clock, START + timedelta(minutes=3))
    assert service.get_schedule(SCOPE, name).state == "ended"
    # Enable of an ended row recomputes and it stays ended.
    assert service.enable_schedule(SCOPE, name, actor="t").state == "ended"
    revived = service.update_schedule(SCOPE, name, SchedulePatch(max_runs=3), actor="t")
    assert revived.state == "active" and revived.runs_left == 2
    assert revived.next_run == clock.now().replace(second=0) + timedelta(minutes=1)
    run_until(dispatcher, clock, START + timedelta(minutes=10))
    row = service.get_schedule(SCOPE, name)
    assert row.run_count == 3 and row.state == "ended"
    # A window that ended: moving end_at later revives it too.
    windowed = create(service, "* * * * *", end_at=clock.now() + timedelta(minutes=2))
    run_until(dispatcher, clock, clock.now() + timedelta(minutes=5))
    assert service.get_schedule(SCOPE, windowed).state == "ended"
    later = clock.now() + timedelta(hours=1)
    revived = service.update_schedule(SCOPE, windowed, SchedulePatch(end_at=later), actor="t")
    assert revived.state == "active" and revived.next_run is not None


def test_an_edit_that_uses_up_the_runs_ends_the_row_with_an_event(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    name = create(service, "* * * * *", max_runs=5)
    run_until(node(database, clock), clock, START + timedelta(minutes=2))
    ended = service.update_schedule(SCOPE, name, SchedulePatch(max_runs=2), actor="t")
    assert ended.state == "ended" and ended.next_run is None and ended.enabled
    last = ledger(database, ended.id)[-1]
    assert last.code == ev.SCHEDULE_ENDED.text and last.detail["reason"] == "edit"


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    max_runs=st.integers(min_value=1, max_value=4),
    start_in=st.integers(min_value=0, max_value=600),
    length=st.none() | st.integers(min_value=0, max_value=900),
    steps=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=15),
)
def test_never_more_than_max_runs_and_never_outside_the_window(
    database: Database,
    clock: FakeClock,
    service: ScheduleService,
    max_runs: int,
    start_in: int,
    length: int | None,
    steps: list[int],
) -> None:
    now = clock.now()
    start_at = now + timedelta(seconds=start_in)
    end_at = None if length is None else start_at + timedelta(seconds=length)
    try:
        name = create(service, "@every 30s", max_runs=max_runs, start_at=start_at, end_at=end_at)
    except CronRejected:  # a window with no occurrence is refused at create
        assert length is not None and length < 30
        return
    dispatcher = node(database, clock)
    for step in steps:
        clock.advance(step)
        dispatcher.tick()
    row = service.get_schedule(SCOPE, name)
    fired = items(database, row.id)
    assert len(fired) == row.run_count <= max_runs
    for item in fired:
        assert item.scheduled_for >= start_at
        assert end_at is None or item.scheduled_for <= end_at
    if row.run_count == max_runs:
        assert row.state == "ended" and row.next_run is None
    service.remove_schedule(SCOPE, name, actor="t")
