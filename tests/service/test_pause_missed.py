"""`pause --until WHEN --missed skip|once|all` (issue 36): the pause's own end enqueues
what it passed as a resume `--missed` would (backfill items, the same cap, exactly
once), in the fire transaction that ends it, as of that occurrence. Through the
service and real dispatchers on both databases, with a FakeClock (no sleeping)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import BackfillTooLarge, InvalidRequest, InvalidUntil
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import START, counts, snapshot

SCOPE = Scope("acme", "billing", "prod")
HOUR = datetime(2026, 1, 5, 13, 0, tzinfo=UTC)  # the first hourly occurrence after START
UNTIL = HOUR + timedelta(hours=2, minutes=30)  # passes 13:00, 14:00 and 15:00
PASSED = [HOUR + timedelta(hours=h) for h in range(3)]
ENDS_AT = HOUR + timedelta(hours=3)  # 16:00: the first occurrence at or after until
EXPECTED = {"skip": [], "once": PASSED[-1:], "all": PASSED}


def _paused(service: ScheduleService, missed: str | None, overlap: str = "allow") -> None:
    spec = ScheduleSpec(job="report", cron="0 * * * *", name="hourly", overlap=overlap)
    service.create_schedule(SCOPE, spec, actor="t")
    service.pause_schedule(
        SCOPE,
        "hourly",
        actor="ops",
        until=UNTIL.isoformat(),
        note="migration",
        missed=missed,  # type: ignore[arg-type]
    )


def _items(service: ScheduleService, name: str = "hourly") -> list[tuple[datetime | None, str]]:
    row = service.get_schedule(SCOPE, name)
    return sorted(
        (i.scheduled_for, i.source)
        for i in service.list_items("acme", limit=1000)
        if i.schedule_id == row.id
    )


def _resumes(service: ScheduleService, name: str = "hourly") -> list[dict[str, object]]:
    history = service.schedule_history(SCOPE, name, limit=200)
    return [e.detail for e in history if e.code == ev.SCHEDULE_RESUMED.text]


@pytest.mark.parametrize("missed", ["skip", "once", "all"])
def test_the_pause_end_enqueues_what_the_policy_names_exactly_once(
    service: ScheduleService, database: Database, clock: FakeClock, missed: str
) -> None:
    _paused(service, missed)
    row = service.get_schedule(SCOPE, "hourly")
    assert row.paused_missed == missed and row.paused_until == UNTIL
    paused = next(
        e for e in service.schedule_history(SCOPE, "hourly") if e.code == ev.SCHEDULE_PAUSED.text
    )
    assert paused.detail["missed"] == missed
    leader, other = Dispatcher(database, clock, holder="a"), Dispatcher(database, clock, holder="b")
    for at in [*PASSED, ENDS_AT]:
        for _ in range(2):  # each instant ticked twice, by both
            clock.set(at + timedelta(seconds=1))
            leader.tick()
            other.tick()
    backfilled = [(at, "backfill") for at in EXPECTED[missed]]
    assert _items(service) == sorted([*backfilled, (ENDS_AT, "schedule")])
    assert not service.get_schedule(SCOPE, "hourly").paused
    assert service.get_schedule(SCOPE, "hourly").paused_missed is None
    resumes = _resumes(service)
    if missed == "skip":
        assert resumes == []  # as before: the fire's own event says `resumed`
    else:
        assert len(resumes) == 1 and resumes[0]["missed"] == missed
        assert resumes[0]["enqueued"] == len(EXPECTED[missed])
        assert resumes[0]["as_of"] == ENDS_AT.isoformat() and "refused" not in resumes[0]
    fired = [
        e for e in service.schedule_history(SCOPE, "hourly") if e.code == ev.SCHEDULE_FIRED.text
    ]
    assert [e.detail["resumed"] for e in fired] == ["pause until reached"]
    assert fired[0].detail.get("missed") == (None if missed == "skip" else missed)
    # The takeover after the leader's lease runs out finds nothing left to do.
    clock.set(ENDS_AT + timedelta(minutes=5))
    other.tick()
    clock.set(ENDS_AT + timedelta(hours=1, seconds=1))
    other.tick()
    assert _items(service) == sorted(
        [*backfilled, (ENDS_AT, "schedule"), (ENDS_AT + timedelta(hours=1), "schedule")]
    )


def test_a_late_dispatcher_backfills_up_to_until_and_coalesces_the_rest(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    _paused(service, "all")
    clock.set(ENDS_AT + timedelta(hours=1, minutes=30))  # down from before 13:00 to 17:30
    Dispatcher(database, clock, holder="a").tick()
    # 13, 14, 15 were the pause's; 16:00 is the dispatcher's own coalescing, into 17:00.
    late = ENDS_AT + timedelta(hours=1)
    assert _items(service) == sorted([*((at, "backfill") for at in PASSED), (late, "schedule")])
    assert _resumes(service)[0]["as_of"] == late.isoformat()


def test_firing_ahead_ends_the_pause_as_of_its_instant(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    _paused(service, "once")
    dispatcher = Dispatcher(database, clock, holder="a", fire_ahead=0.25)
    for at in PASSED:
        clock.set(at + timedelta(seconds=1))
        dispatcher.tick()
    clock.set(ENDS_AT - timedelta(seconds=0.2))  # committed before the instant, as of it
    dispatcher.tick()
    assert _items(service) == [(PASSED[-1], "backfill"), (ENDS_AT, "schedule")]
    (backfill,) = [i for i in service.list_items("acme") if i.source == "backfill"]
    assert backfill.available_at >= ENDS_AT  # claimable from the instant, not before
    assert _resumes(service)[0]["as_of"] == ENDS_AT.isoformat()


def test_racing_dispatchers_end_the_pause_once(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    _paused(service, "all", overlap="skip")  # the fire's own item does not refuse the backfill
    dispatchers = [Dispatcher(database, clock, holder=h) for h in ("a", "b", "c")]
    for at in [*PASSED, ENDS_AT, ENDS_AT]:
        clock.set(at + timedelta(seconds=1))
        threads = [threading.Thread(target=d.tick) for d in dispatchers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert _items(service) == sorted([*((at, "backfill") for at in PASSED), (ENDS_AT, "schedule")])
    assert len(_resumes(service)) == 1


def test_missed_without_until_or_past_the_cap_is_refused_and_changes_nothing(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    spec = ScheduleSpec(job="report", cron="every 5 seconds", name="fast", overlap="allow")
    service.create_schedule(SCOPE, spec, actor="t")
    before, rows = counts(database), snapshot(database)
    with pytest.raises(InvalidUntil) as refused:
        service.pause_schedule(SCOPE, "fast", actor="ops", missed="all")
    assert refused.value.detail == {"field": "until", "missed": "all"}
    with pytest.raises(InvalidUntil):
        service.pause_schedule(SCOPE, "fast", actor="ops", missed="skip")
    with pytest.raises(InvalidRequest):
        service.pause_schedule(SCOPE, "fast", actor="ops", until="2026-01-06T00:00Z", missed="most")  # type: ignore[arg-type]
    # Two hours of every 5 seconds: 1,440 occurrences, over the backfill cap of 1,000.
    two_hours = (START + timedelta(hours=2)).isoformat()
    with pytest.raises(BackfillTooLarge):
        service.pause_schedule(SCOPE, "fast", actor="ops", until=two_hours, missed="all")
    assert counts(database) == before and snapshot(database) == rows
    # `once` looks only at the latest occurrence, so it has no cap.
    assert (
        service.pause_schedule(
            SCOPE, "fast", actor="ops", until=two_hours, missed="once"
        ).paused_missed
        == "once"
    )


def test_a_refusal_at_the_pause_end_is_recorded_and_the_fire_stands(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    _paused(service, "all")
    # Edited while paused: [paused_at, until) now holds more than the cap.
    service.update_schedule(SCOPE, "hourly", SchedulePatch(cron="every 5 seconds"), actor="t")
    clock.set(UNTIL + timedelta(seconds=1))
    Dispatcher(database, clock, holder="a").tick()
    row = service.get_schedule(SCOPE, "hourly")
    assert not row.paused
    assert [source for _at, source in _items(service)] == ["schedule"]
    (resumed,) = _resumes(service)
    assert resumed["enqueued"] == 0 and resumed["refused"]["code"] == "X400104BKFCAP"  # type: ignore[index]


def test_repausing_replaces_the_policy_and_resume_clears_it(
    service: ScheduleService, clock: FakeClock
) -> None:
    _paused(service, "all")
    again = service.pause_schedule(SCOPE, "hourly", actor="ops", until=UNTIL.isoformat())
    assert again.paused_missed is None and again.paused_at == START
    service.pause_schedule(SCOPE, "hourly", actor="ops", until=UNTIL.isoformat(), missed="once")
    clock.set(HOUR + timedelta(minutes=5))
    resumed = service.resume_schedule(SCOPE, "hourly", actor="ops")
    assert resumed.paused_missed is None and not resumed.paused
    assert _resumes(service)[0]["missed"] == "skip" and _resumes(service)[0]["enqueued"] == 0


_example = iter(range(10**6))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    every=st.sampled_from([5, 15, 60]),
    pause_minutes=st.integers(min_value=1, max_value=240),
    ticks=st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=6),
    missed=st.sampled_from(["once", "all"]),
)
def test_property_one_item_per_missed_occurrence(
    service: ScheduleService,
    database: Database,
    clock: FakeClock,
    every: int,
    pause_minutes: int,
    ticks: list[int],
    missed: str,
) -> None:
    """Whatever the pause's length and however the dispatcher's ticks fall (late, twice,
    never inside the pause), the pause's end leaves exactly one backfill item per
    occurrence in [paused_at, until) (`once`: the latest), and none of them twice."""
    n = next(_example)
    name = f"p{n}"
    base = clock.now() + timedelta(days=1)
    clock.set(base)
    cron = f"*/{every} * * * *" if every < 60 else "0 * * * *"
    service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron=cron, name=name, overlap="allow"), actor="t"
    )
    until = base + timedelta(minutes=pause_minutes)
    service.pause_schedule(SCOPE, name, actor="ops", until=until.isoformat(), missed=missed)  # type: ignore[arg-type]
    dispatcher = Dispatcher(database, clock, holder=f"h{n}")
    for minute in sorted(ticks):
        clock.set(base + timedelta(minutes=minute, seconds=1))
        dispatcher.tick()
    clock.set(until + timedelta(minutes=61))  # past the first occurrence at or after until
    dispatcher.tick()
    dispatcher.tick()
    passed = []
    at = base.replace(second=0, microsecond=0)
    while at < until:
        if at >= base and (at.minute % every == 0 if every < 60 else at.minute == 0):
            passed.append(at)
        at += timedelta(minutes=1)
    want = passed if missed == "all" else passed[-1:]
    backfills = [at for at, source in _items(service, name) if source == "backfill"]
    assert backfills == want
    assert not service.get_schedule(SCOPE, name).paused
    dispatcher.release()
