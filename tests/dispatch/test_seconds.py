"""Schedules in seconds through Dispatcher.tick() (issue 16), on SQLite and PostgreSQL.

The schedules are stored as the real parser normalizes them (`every 10
seconds` -> `@every 10s`) and the dispatcher computes their occurrences with
the real core (`occurrences.next_run_function`, its default), not the
stand-in of firing_support.

"Coalesced" (core/firing.py): a late tick turns every occurrence from the
row's `next_run` (the ledger's `first_due`) up to the latest one <= now into
ONE decision, recorded once at that latest occurrence (`scheduled_for`); the
ledger's `coalesced` counts them all, that latest one included. So a 10 s
schedule whose dispatcher was away for 60 s is due for 6 occurrences on
recovery and fires once with coalesced 6.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.cron import parse
from cronplane.core.firing import Outcome
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store import queue
from cronplane.store.database import Database
from firing_support import (
    START,
    add_job,
    add_schedule,
    check_exactly_once,
    items,
    ledger,
    schedule,
)

EVERY_10S = parse("every 10 seconds").normalized
SECOND = timedelta(seconds=1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def real_dispatcher(database: Database, clock: FakeClock, **options: float) -> Dispatcher:
    """A dispatcher over the real occurrences of core (its default)."""
    return Dispatcher(database, clock, holder="node-a", **options)  # type: ignore[arg-type]


def at(clock: FakeClock, seconds: float) -> None:
    clock.set(START + timedelta(seconds=seconds))


def test_the_stored_form_is_an_exact_interval() -> None:
    assert EVERY_10S == "@every 10s"
    assert START.timestamp() % 10 == 0  # START is one of its instants


def test_every_10_seconds_fires_each_instant_once(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow")
    dispatcher = real_dispatcher(database, clock, max_sleep=30.0, ttl=90.0)
    fired = []
    for k in range(18):  # three minutes
        at(clock, 10 * k + 0.1)
        report = dispatcher.tick()
        fired.append(report.fired)
        # It sleeps until the next instant, to the sub-second, not on a 1 s grid.
        assert report.sleep == pytest.approx(9.9)
        at(clock, 10 * k + 5)
        assert dispatcher.tick().fired == 0  # between two instants: nothing
    assert fired == [1] * 18
    assert [i.scheduled_for for i in items(database, sid)] == [
        START + 10 * k * SECOND for k in range(18)
    ]
    events = ledger(database, sid)
    assert [e.code for e in events] == [ev.SCHEDULE_FIRED.text] * 18
    assert all(e.detail["coalesced"] == 1 for e in events)
    assert schedule(database, sid).next_run == START + 180 * SECOND
    assert check_exactly_once(database) == {"occurrences": 18, "max_coalesced": 1}


def test_a_60_second_outage_is_one_fire_coalescing_6(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow")
    dispatcher = real_dispatcher(database, clock)
    at(clock, 0.1)
    assert dispatcher.tick().fired == 1
    # Away for a minute: 10:00:10 ... 10:01:00 are all missed.
    at(clock, 60.5)
    report = dispatcher.tick()
    assert report.fired == 1
    last = ledger(database, sid)[-1]
    assert last.code == ev.SCHEDULE_FIRED.text
    assert last.scheduled_for == START + 60 * SECOND  # the latest due occurrence
    assert last.detail["coalesced"] == 6
    assert last.detail["first_due"] == (START + 10 * SECOND).isoformat()
    assert [i.scheduled_for for i in items(database, sid)] == [START, START + 60 * SECOND]
    assert schedule(database, sid).next_run == START + 70 * SECOND
    # Then the normal cadence again.
    at(clock, 70.2)
    assert dispatcher.tick().fired == 1
    assert check_exactly_once(database) == {"occurrences": 8, "max_coalesced": 6}


def test_misfire_grace_in_seconds(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", misfire_grace=3)
    dispatcher = real_dispatcher(database, clock)
    at(clock, 5)  # 10:00:00 is 5 s old: later than 3 s
    report = dispatcher.tick()
    assert report.fired == 0 and report.counts[Outcome.SKIPPED_MISFIRE] == 1
    at(clock, 12.5)  # 10:00:10 is 2.5 s old: within the grace
    assert dispatcher.tick().fired == 1
    # After an outage the grace is judged against the latest occurrence.
    at(clock, 62)  # 10:01:00 is 2 s old: fires, standing for 20 ... 60
    assert dispatcher.tick().fired == 1
    at(clock, 74)  # 10:01:10 is 4 s old: skipped
    assert dispatcher.tick().counts[Outcome.SKIPPED_MISFIRE] == 1
    codes = [(e.code, e.scheduled_for, e.detail["coalesced"]) for e in ledger(database, sid)]
    assert codes == [
        (ev.SKIPPED_MISFIRE.text, START, 1),
        (ev.SCHEDULE_FIRED.text, START + 10 * SECOND, 1),
        (ev.SCHEDULE_FIRED.text, START + 60 * SECOND, 5),
        (ev.SKIPPED_MISFIRE.text, START + 70 * SECOND, 1),
    ]
    assert [i.scheduled_for for i in items(database, sid)] == [
        START + 10 * SECOND,
        START + 60 * SECOND,
    ]
    check_exactly_once(database)


def test_a_25_second_run_of_a_10_second_schedule_skips_twice(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S)  # overlap: skip (the default)
    dispatcher = real_dispatcher(database, clock)
    at(clock, 0.1)
    assert dispatcher.tick().fired == 1
    with database.begin() as conn:
        running = queue.claim(conn, "w", clock.now(), timedelta(seconds=60))
    assert running is not None and running.scheduled_for == START
    for instant in (10, 20):
        at(clock, instant + 0.1)
        report = dispatcher.tick()
        assert report.fired == 0 and report.counts[Outcome.SKIPPED_OVERLAP] == 1
    at(clock, 25)  # the run ends after 25 s
    with database.begin() as conn:
        queue.succeed(conn, running.id, "w", clock.now(), None)
    at(clock, 30.1)
    assert dispatcher.tick().fired == 1
    assert [(e.code, e.scheduled_for) for e in ledger(database, sid)] == [
        (ev.SCHEDULE_FIRED.text, START),
        (ev.SKIPPED_OVERLAP.text, START + 10 * SECOND),
        (ev.SKIPPED_OVERLAP.text, START + 20 * SECOND),
        (ev.SCHEDULE_FIRED.text, START + 30 * SECOND),
    ]
    # Never a pile-up: one item per fire, none for the skipped occurrences.
    assert [i.scheduled_for for i in items(database, sid)] == [START, START + 30 * SECOND]
    check_exactly_once(database)
