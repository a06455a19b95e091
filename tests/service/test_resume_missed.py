"""Resume with a policy for what the pause passed (issue 36): `skip` (the default),
`once` (the latest occurrence passed) or `all` (each one), enqueued as backfill items
exactly once, through the service and a real dispatcher on both databases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import BackfillTooLarge, InvalidRequest
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database

SCOPE = Scope("acme", "billing", "prod")
HOUR = datetime(2026, 1, 5, 13, 0, tzinfo=UTC)  # the first hourly occurrence after START
PASSED = [HOUR + timedelta(hours=h) for h in range(3)]


def _paused_through_three_hours(
    service: ScheduleService, database: Database, clock: FakeClock, cron: str = "0 * * * *"
) -> Dispatcher:
    spec = ScheduleSpec(job="report", cron=cron, name="hourly", overlap="allow")
    service.create_schedule(SCOPE, spec, actor="t")
    service.pause_schedule(SCOPE, "hourly", actor="ops")
    dispatcher = Dispatcher(database, clock, holder="a")
    for hour in range(3):
        clock.set(HOUR + timedelta(hours=hour, seconds=1))
        dispatcher.tick()
    clock.set(HOUR + timedelta(hours=2, minutes=30))
    dispatcher.tick()  # what is due by now is passed (skipped-paused), not left to fire
    return dispatcher


def _items(service: ScheduleService) -> list[tuple[datetime | None, str]]:
    return sorted((i.scheduled_for, i.source) for i in service.list_items("acme", limit=500))


@pytest.mark.parametrize(
    ("missed", "enqueued"), [("skip", []), ("once", PASSED[-1:]), ("all", PASSED)]
)
def test_resume_enqueues_what_the_policy_names_once(
    service: ScheduleService,
    database: Database,
    clock: FakeClock,
    missed: str,
    enqueued: list[datetime],
) -> None:
    dispatcher = _paused_through_three_hours(service, database, clock)
    resumed = service.resume_schedule(SCOPE, "hourly", actor="ops", missed=missed)  # type: ignore[arg-type]
    assert not resumed.paused
    assert _items(service) == [(at, "backfill") for at in enqueued]
    history = service.schedule_history(SCOPE, "hourly")
    resumed_event = next(e for e in history if e.code == ev.SCHEDULE_RESUMED.text)
    assert resumed_event.detail["missed"] == missed
    assert any(e.code == ev.BACKFILL_ENQUEUED.text for e in history) == bool(enqueued)
    # A second resume writes nothing; the next occurrence fires as usual, once.
    service.resume_schedule(SCOPE, "hourly", actor="ops", missed="all")
    clock.set(HOUR + timedelta(hours=3, seconds=1))
    dispatcher.tick()
    assert _items(service) == sorted(
        [(at, "backfill") for at in enqueued] + [(HOUR + timedelta(hours=3), "schedule")]
    )


def test_a_pause_past_the_backfill_cap_is_refused_whole_and_stays_paused(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    _paused_through_three_hours(service, database, clock, cron="every 5 seconds")
    with pytest.raises(BackfillTooLarge):
        service.resume_schedule(SCOPE, "hourly", actor="ops", missed="all")
    assert service.get_schedule(SCOPE, "hourly").paused and _items(service) == []
    with pytest.raises(InvalidRequest):
        service.resume_schedule(SCOPE, "hourly", actor="ops", missed="most")  # type: ignore[arg-type]
    # `once` looks only at the latest occurrence passed, however many there were.
    assert service.resume_schedule(SCOPE, "hourly", actor="ops", missed="once").paused is False
    assert _items(service) == [(HOUR + timedelta(hours=2, minutes=30), "backfill")]
