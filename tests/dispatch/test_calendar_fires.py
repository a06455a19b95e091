"""Business calendars decide what the dispatcher fires (issue 36), on SQLite and PostgreSQL:
rows made by the service, fired by Dispatcher.tick() with a fake clock, checked by the
queue items and the ledger they left.

The dates are worked out by hand (2027): Europe/London, England's bank holidays include
Spring Bank Holiday (Mon 31 May) and Late Summer (Mon 30 Aug); 31 July is a Saturday,
31 October a Sunday.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import items

SCOPE = Scope("acme")
_names = itertools.count()


def _service(database: Database, start: datetime) -> tuple[ScheduleService, FakeClock]:
    clock = FakeClock(start)
    service = ScheduleService(database, clock)
    service.save_calendar("acme", "weekends", weekly=["sat", "sun"], actor="t")
    service.save_calendar("acme", "uk", holidays="GB-ENG", actor="t")
    return service, clock


def _schedule(service: ScheduleService, cron: str, **fields: object) -> tuple[str, object]:
    name = f"s{next(_names)}"
    service.register_job("acme", "default", JobSpec(name=name, target="python:h:ok"), actor="t")
    spec = ScheduleSpec(
        job=name, cron=cron, name=name, timezone="Europe/London", overlap="allow", **fields
    )  # type: ignore[arg-type]
    return name, service.create_schedule(SCOPE, spec, actor="t").id


def _run_until(service: ScheduleService, clock: FakeClock, name: str, end: datetime) -> None:
    """Tick at each instant the row is due (its next_run), up to `end`."""
    dispatcher = Dispatcher(service.database, clock, holder="node-a", ttl=10)
    while True:
        due = service.get_schedule(SCOPE, name).next_run
        if due is None or due > end:
            return
        clock.set(max(due, clock.now()) + timedelta(seconds=1))
        dispatcher.tick()


def _utc(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat()


def _ledger(service: ScheduleService, name: str) -> list[tuple[str, str, dict]]:
    return [
        (event.code, _utc(event.scheduled_for), event.detail)
        for event in reversed(service.schedule_history(SCOPE, name, limit=200))
        if event.scheduled_for is not None
    ]


def test_last_business_day_of_the_month_runs_the_business_day_before(database: Database) -> None:
    service, clock = _service(database, datetime(2027, 5, 1, tzinfo=UTC))
    name, row_id = _schedule(
        service, "0 18 L * *", exclude=["weekends", "uk"], on_excluded="previous"
    )
    _run_until(service, clock, name, datetime(2027, 11, 30, tzinfo=UTC))
    fired = [_utc(item.scheduled_for) for item in items(database, row_id)]
    assert fired == [
        "2027-05-28T17:00:00+00:00",  # Mon 31 May: Spring Bank Holiday -> Fri 28th, 18:00 BST
        "2027-06-30T17:00:00+00:00",
        "2027-07-30T17:00:00+00:00",  # Sat 31 July -> Fri 30th
        "2027-08-31T17:00:00+00:00",
        "2027-09-30T17:00:00+00:00",
        "2027-10-29T17:00:00+00:00",  # Sun 31 October -> Fri 29th (still BST)
    ]
    moved = {at: detail.get("moved_from") for code, at, detail in _ledger(service, name)}
    assert moved["2027-05-28T17:00:00+00:00"] == ["2027-05-31T17:00:00+00:00"]
    assert moved["2027-06-30T17:00:00+00:00"] is None


def test_skip_records_each_excluded_occurrence_with_its_calendar(database: Database) -> None:
    service, clock = _service(database, datetime(2027, 8, 26, 12, tzinfo=UTC))  # a Thursday
    name, row_id = _schedule(service, "0 9 * * *", exclude=["weekends", "uk"])
    _run_until(service, clock, name, datetime(2027, 9, 1, 12, tzinfo=UTC))
    fired = [_utc(item.scheduled_for)[:10] for item in items(database, row_id)]
    assert fired == ["2027-08-27", "2027-08-31", "2027-09-01"]  # Fri, Tue, Wed
    skipped = [
        (at[:10], detail["calendar"], detail["why"])
        for code, at, detail in _ledger(service, name)
        if code == "V200360SKPCAL"
    ]
    assert skipped == [
        ("2027-08-28", "weekends", "Saturday"),
        ("2027-08-29", "weekends", "Sunday"),
        ("2027-08-30", "uk", "Late Summer Bank Holiday (GB-ENG)"),
    ]


def test_next_business_day_moves_a_saturday_run_to_monday(database: Database) -> None:
    service, clock = _service(database, datetime(2027, 9, 1, tzinfo=UTC))
    name, row_id = _schedule(service, "0 9 * * 6", exclude=["weekends"], on_excluded="next")
    _run_until(service, clock, name, datetime(2027, 9, 21, tzinfo=UTC))
    fired = [_utc(item.scheduled_for) for item in items(database, row_id)]
    assert fired == [
        "2027-09-06T08:00:00+00:00",  # Sat 4th -> Mon 6th, 09:00 BST
        "2027-09-13T08:00:00+00:00",
        "2027-09-20T08:00:00+00:00",
    ]


def test_a_calendar_change_moves_the_next_run_and_is_in_the_ledger(database: Database) -> None:
    service, _clock = _service(database, datetime(2027, 9, 6, 10, tzinfo=UTC))  # Monday
    name, _ = _schedule(service, "0 9 * * *", exclude=["weekends"], on_excluded="next")
    assert service.get_schedule(SCOPE, name).next_run == datetime(2027, 9, 7, 8, tzinfo=UTC)
    saved = service.save_calendar(
        "acme", "weekends", weekly=["sat", "sun"], dates=["2027-09-07"], revision=1, actor="ops"
    )
    assert saved["revision"] == 2 and saved["dates"] == ["2027-09-07"]
    # Tuesday 7th is excluded now: its run moves to Wednesday, where it runs once.
    assert service.get_schedule(SCOPE, name).next_run == datetime(2027, 9, 8, 8, tzinfo=UTC)
    changes = [
        e for e in service.schedule_history(SCOPE, name, limit=50) if e.code == "V200361CALSAV"
    ]
    assert changes == []  # the calendar's event is the tenant's, not the row's
    saved_events = service.audit.list("acme", codes=["V200361CALSAV"])
    assert saved_events[0].detail["moved"] == 1 and saved_events[0].actor == "ops"
