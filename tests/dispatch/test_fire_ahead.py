"""Firing ahead (issue 16): an instant's items are committed before it, claimable at it.

A dispatcher with `fire_ahead` wakes that long before the earliest next_run
and fires the rows due at that instant *as of* the instant: the items, the
ledger and the rows read exactly as if the fire had run at it (the
scheduled time, `available_at`, next_run, late_ms 0), but the transaction
commits before the instant, so a burst's commit time is not its lateness.
Nothing due later is touched, and nothing fires twice. On SQLite and
PostgreSQL, with an injected clock.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.cron import parse
from cronplane.dispatcher import Dispatcher
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
AHEAD = 0.25


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START - 5 * SECOND)


def dispatcher(database: Database, clock: FakeClock, ahead: float = AHEAD) -> Dispatcher:
    return Dispatcher(database, clock, holder="node-a", ttl=90.0, max_sleep=30.0, fire_ahead=ahead)


def at(clock: FakeClock, seconds: float) -> None:
    clock.set(START + timedelta(seconds=seconds))


def test_an_instant_is_fired_ahead_as_of_the_instant(database: Database, clock: FakeClock) -> None:
    add_job(database)
    ten = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    later = add_schedule(database, "later", cron=EVERY_10S, next_run=START + 5 * SECOND)
    d = dispatcher(database, clock)
    at(clock, -0.3)  # more than AHEAD before: nothing yet, wake at START - AHEAD
    report = d.tick()
    assert report.fired == 0
    assert report.sleep == pytest.approx(0.3 - AHEAD)
    at(clock, -0.2)
    report = d.tick()
    assert report.fired == 1
    [item] = items(database, ten)
    assert item.scheduled_for == START
    assert item.available_at == START  # claimable at the instant, not before
    [fired] = ledger(database, ten)
    assert fired.code == ev.SCHEDULE_FIRED.text
    assert fired.scheduled_for == START
    assert fired.detail["late_ms"] == 0
    assert schedule(database, ten).next_run == START + 10 * SECOND
    # The row due 5 s later was not touched; the dispatcher wakes AHEAD before it.
    assert items(database, later) == []
    assert schedule(database, later).next_run == START + 5 * SECOND
    assert report.sleep == pytest.approx(5.2 - AHEAD)
    # Ticking again before the instant fires nothing twice.
    at(clock, -0.1)
    assert d.tick().fired == 0
    at(clock, 0.0)
    assert d.tick().fired == 0
    assert check_exactly_once(database) == {"occurrences": 1, "max_coalesced": 1}


def test_every_instant_of_a_minute_once(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    d = dispatcher(database, clock)
    at(clock, -1)
    for _ in range(40):  # follow the dispatcher's own sleeps
        report = d.tick()
        clock.advance(report.sleep)
        if clock.now() >= START + 60 * SECOND:
            break
    assert [i.scheduled_for for i in items(database, sid)] == [
        START + 10 * k * SECOND for k in range(7)
    ]
    # Each was committed before its instant (the clock never passed it when firing).
    assert all(e.detail["late_ms"] == 0 for e in ledger(database, sid))
    assert check_exactly_once(database) == {"occurrences": 7, "max_coalesced": 1}


def test_overdue_rows_fire_at_now_as_before(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    d = dispatcher(database, clock)
    at(clock, 0.4)  # late: fired as of now, lateness recorded
    assert d.tick().fired == 1
    [item] = items(database, sid)
    assert item.available_at == START + timedelta(seconds=0.4)
    assert ledger(database, sid)[0].detail["late_ms"] == 400


def test_without_fire_ahead_nothing_fires_before_its_instant(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    d = dispatcher(database, clock, ahead=0.0)
    at(clock, -0.01)
    report = d.tick()
    assert report.fired == 0
    assert report.sleep == pytest.approx(0.01)
    assert items(database, sid) == []


def test_fire_ahead_must_be_below_a_second() -> None:
    with pytest.raises(ValueError, match="fire_ahead"):
        Dispatcher(None, FakeClock(START), fire_ahead=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fire_ahead"):
        Dispatcher(None, FakeClock(START), fire_ahead=-0.1)  # type: ignore[arg-type]
