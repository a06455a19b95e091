"""Pause and resume (docs/controls.md), through the service and a real dispatcher, on
both databases with a FakeClock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidRequest, InvalidUntil, StaleRevision
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import START

SCOPE = Scope("acme", "billing", "prod")
HOUR = datetime(2026, 1, 5, 13, 0, tzinfo=UTC)  # the first hourly occurrence after START


def hourly(service: ScheduleService, name: str = "hourly") -> None:
    # overlap allow: items stay queued here (no worker), each fire stands on its own.
    spec = ScheduleSpec(job="report", cron="0 * * * *", name=name, overlap="allow")
    service.create_schedule(SCOPE, spec, actor="t")


def codes(service: ScheduleService, name: str = "hourly") -> list[str]:
    """The schedule's event codes, oldest first."""
    return [event.code for event in reversed(service.schedule_history(SCOPE, name, limit=200))]


def scheduled_items(service: ScheduleService) -> list[datetime | None]:
    return sorted(
        item.scheduled_for
        for item in service.list_items("acme", limit=500)
        if item.scheduled_for is not None
    )


def test_pause_records_each_passed_occurrence_once_with_note_and_who(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service)
    paused = service.pause_schedule(SCOPE, "hourly", actor="ops@acme", note="db migration")
    assert paused.paused and paused.paused_by == "ops@acme" and paused.paused_note == "db migration"
    assert paused.paused_at == START and paused.paused_until is None and paused.enabled
    dispatcher = Dispatcher(database, clock, holder="a")
    for hour in range(3):
        clock.set(HOUR + timedelta(hours=hour, seconds=1))
        dispatcher.tick()
    assert scheduled_items(service) == []
    skipped = [
        e for e in service.schedule_history(SCOPE, "hourly") if e.code == ev.SKIPPED_PAUSED.text
    ]
    assert sorted(e.scheduled_for for e in skipped) == [HOUR + timedelta(hours=h) for h in range(3)]
    assert {(e.detail["note"], e.detail["paused_by"]) for e in skipped} == {
        ("db migration", "ops@acme")
    }
    # Resume: the next occurrence fires, nothing passed is back-filled.
    resumed = service.resume_schedule(SCOPE, "hourly", actor="ops@acme")
    assert not resumed.paused and resumed.paused_by is None and resumed.paused_note is None
    clock.set(HOUR + timedelta(hours=3, seconds=1))
    dispatcher.tick()
    assert scheduled_items(service) == [HOUR + timedelta(hours=3)]
    assert ev.SCHEDULE_PAUSED.text in codes(service) and ev.SCHEDULE_RESUMED.text in codes(service)


def test_a_long_pause_with_until_ends_in_one_fire_at_the_first_occurrence_after_it(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service)
    until = HOUR + timedelta(hours=5, minutes=30)
    service.pause_schedule(SCOPE, "hourly", actor="ops", until=until.isoformat())
    dispatcher = Dispatcher(database, clock, holder="a")
    # The dispatcher was down for the whole pause and well past its end.
    clock.set(HOUR + timedelta(hours=9, seconds=5))
    dispatcher.tick()
    # One coalesced fire, no burst: the latest occurrence, past `until`.
    assert scheduled_items(service) == [HOUR + timedelta(hours=9)]
    row = service.get_schedule(SCOPE, "hourly")
    assert (
        not row.paused and row.paused_until is None and row.next_run == HOUR + timedelta(hours=10)
    )
    (fired,) = [
        e for e in service.schedule_history(SCOPE, "hourly") if e.code == ev.SCHEDULE_FIRED.text
    ]
    assert fired.detail["resumed"] and fired.detail["coalesced"] == 10


def test_until_resumes_at_the_first_occurrence_at_or_after_it_when_on_time(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service)
    until = HOUR + timedelta(hours=2)  # exactly an occurrence: it fires
    service.pause_schedule(SCOPE, "hourly", actor="ops", until=until.isoformat())
    dispatcher = Dispatcher(database, clock, holder="a")
    for hour in range(4):
        clock.set(HOUR + timedelta(hours=hour, seconds=1))
        dispatcher.tick()
    assert scheduled_items(service) == [HOUR + timedelta(hours=2), HOUR + timedelta(hours=3)]
    outcomes = [
        (e.scheduled_for, e.code)
        for e in reversed(service.schedule_history(SCOPE, "hourly"))
        if e.scheduled_for is not None
    ]
    assert outcomes == [
        (HOUR, ev.SKIPPED_PAUSED.text),
        (HOUR + timedelta(hours=1), ev.SKIPPED_PAUSED.text),
        (HOUR + timedelta(hours=2), ev.SCHEDULE_FIRED.text),
        (HOUR + timedelta(hours=3), ev.SCHEDULE_FIRED.text),
    ]
    assert not service.get_schedule(SCOPE, "hourly").paused


def test_naive_until_is_in_the_rows_zone(service: ScheduleService) -> None:
    service.create_schedule(
        SCOPE,
        ScheduleSpec(job="report", cron="0 * * * *", name="paris", timezone="Europe/Paris"),
        actor="t",
    )
    row = service.pause_schedule(SCOPE, "paris", actor="ops", until="2026-01-06T09:00")
    assert row.paused_until == datetime(2026, 1, 6, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "until", ["tomorrow", "2026-13-01T00:00", "2026-01-05T12:00:30+00:00", "2025-01-01T00:00Z", ""]
)
def test_bad_until_is_coded_and_changes_nothing(service: ScheduleService, until: str) -> None:
    hourly(service)
    before = service.get_schedule(SCOPE, "hourly")
    with pytest.raises(InvalidUntil) as raised:
        service.pause_schedule(SCOPE, "hourly", actor="ops", until=until)
    assert raised.value.code.text == "X400102UNTINV"
    assert service.get_schedule(SCOPE, "hourly") == before
    assert ev.SCHEDULE_PAUSED.text not in codes(service)


def test_a_note_too_long_is_refused(service: ScheduleService) -> None:
    hourly(service)
    for note in ("x" * 501, "nul\x00", "lone \ud800"):
        with pytest.raises(InvalidRequest):
            service.pause_schedule(SCOPE, "hourly", actor="ops", note=note)
    assert not service.get_schedule(SCOPE, "hourly").paused


def test_pausing_a_paused_row_updates_note_and_until_and_keeps_paused_at(
    service: ScheduleService, clock: FakeClock
) -> None:
    hourly(service)
    first = service.pause_schedule(SCOPE, "hourly", actor="ann", note="one")
    clock.advance(60)
    until = (START + timedelta(days=1)).isoformat()
    second = service.pause_schedule(SCOPE, "hourly", actor="bob", note="two", until=until)
    assert second.paused_at == first.paused_at == START
    assert (second.paused_by, second.paused_note) == ("bob", "two")
    assert second.paused_until == START + timedelta(days=1)
    assert second.revision == first.revision + 1


def test_resuming_an_unpaused_row_is_a_no_op(service: ScheduleService) -> None:
    hourly(service)
    before = service.get_schedule(SCOPE, "hourly")
    assert service.resume_schedule(SCOPE, "hourly", actor="ops") == before
    assert ev.SCHEDULE_RESUMED.text not in codes(service)


def test_pause_honours_the_revision(service: ScheduleService) -> None:
    hourly(service)
    row = service.get_schedule(SCOPE, "hourly")
    with pytest.raises(StaleRevision):
        service.pause_schedule(SCOPE, "hourly", actor="ops", revision=row.revision + 5)
    paused = service.pause_schedule(SCOPE, "hourly", actor="ops", revision=row.revision)
    with pytest.raises(StaleRevision):
        service.resume_schedule(SCOPE, "hourly", actor="ops", revision=row.revision)
    assert service.resume_schedule(SCOPE, "hourly", actor="ops", revision=paused.revision).revision


def test_sync_never_touches_a_pause(service: ScheduleService) -> None:
    from cronplane.core.inputs import CronDeclaration

    app = Scope("acme", "billing", "default")
    service.sync(app, {"report": CronDeclaration(cron="0 * * * *")}, actor="deploy")
    service.pause_schedule(app, "report", actor="ops", note="hold")
    service.sync(app, {"report": CronDeclaration(cron="30 * * * *")}, actor="deploy")
    row = service.get_schedule(app, "report")
    assert row.cron == "30 * * * *" and row.paused and row.paused_note == "hold"


def test_disabling_a_paused_row_keeps_the_pause(service: ScheduleService) -> None:
    hourly(service)
    service.pause_schedule(SCOPE, "hourly", actor="ops", note="hold")
    disabled = service.disable_schedule(SCOPE, "hourly", actor="ops")
    assert disabled.paused and not disabled.enabled
    enabled = service.enable_schedule(SCOPE, "hourly", actor="ops")
    assert enabled.paused and enabled.paused_note == "hold"
