"""Firing ahead (issue 16): an instant's items are committed before it, claimable at it.

A dispatcher with `fire_ahead` wakes that long before the earliest next_run
and fires the rows due at that instant *as of* the instant: the items, the
ledger and the rows read exactly as if the fire had run at it (the
scheduled time, `available_at`, next_run, late_ms 0), but the transaction
commits before the instant, so a burst's commit time is not its lateness.
Nothing due later is touched, and nothing fires twice. A burst that takes
time is started earlier by that time (core.lead), never more than MAX_LEAD
before its instant. On SQLite and PostgreSQL, with an injected clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.cron import parse
from cronplane.core.lead import ASSUMED_ROW_SECONDS, MAX_LEAD, fire_lead
from cronplane.processes import fire_lanes
from cronplane.processes.dispatch_reports import TickReport
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database
from cronplane.store.dispatch import BatchResult, fire_batch
from firing_support import (
    START,
    add_job,
    add_schedule,
    add_schedules,
    check_exactly_once,
    items,
    ledger,
    schedule,
    schedule_row,
)

EVERY_10S = parse("every 10 seconds").normalized
SECOND = timedelta(seconds=1)
AHEAD = 0.25
# The lead before an instant with one row due, before any burst was timed.
LEAD_ONE = fire_lead(AHEAD, 1, ASSUMED_ROW_SECONDS)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START - 5 * SECOND)


def dispatcher(database: Database, clock: FakeClock, ahead: float = AHEAD) -> Dispatcher:
    return Dispatcher(database, clock, holder="node-a", ttl=90.0, max_sleep=30.0, fire_ahead=ahead)


def at(clock: FakeClock, seconds: float) -> None:
    clock.set(START + timedelta(seconds=seconds))


def _follow(d: Dispatcher, clock: FakeClock, until: float) -> list[TickReport]:
    """Tick on the dispatcher's own sleeps until the clock passes START + `until` s."""
    reports: list[TickReport] = []
    while clock.now() < START + timedelta(seconds=until):
        assert len(reports) < 200, "the dispatcher's sleeps do not move the clock on"
        reports.append(d.tick())
        clock.advance(reports[-1].sleep)
    return reports


def test_an_instant_is_fired_ahead_as_of_the_instant(database: Database, clock: FakeClock) -> None:
    add_job(database)
    ten = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    later = add_schedule(database, "later", cron=EVERY_10S, next_run=START + 5 * SECOND)
    d = dispatcher(database, clock)
    at(clock, -0.3)  # more than the lead before: nothing yet, wake at START - lead
    report = d.tick()
    assert report.fired == 0
    assert report.sleep == pytest.approx(0.3 - LEAD_ONE)
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
    # The row due 5 s later was not touched; the dispatcher wakes the lead before it.
    assert items(database, later) == []
    assert schedule(database, later).next_run == START + 5 * SECOND
    assert report.sleep == pytest.approx(5.2 - LEAD_ONE)
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
    _follow(d, clock, 60)
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


def _slow_fires(monkeypatch: pytest.MonkeyPatch, clock: FakeClock, row_seconds: float) -> None:
    """Every fire transaction takes `row_seconds` per selected row on the clock."""

    def slow(conn: Connection, **arguments: object) -> BatchResult:
        result = fire_batch(conn, **arguments)  # type: ignore[arg-type]
        clock.advance(result.selected * row_seconds)
        return result

    monkeypatch.setattr(fire_lanes, "fire_batch", slow)


def _burst(database: Database, rows: int) -> None:
    add_job(database)
    add_schedules(
        database,
        [
            schedule_row(f"s{n}", cron=EVERY_10S, overlap="allow", next_run=START)
            for n in range(rows)
        ],
    )


def _seconds(instant: datetime) -> float:
    return (instant - START).total_seconds()


def test_a_burst_is_started_earlier_by_the_time_it_takes(
    database: Database, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _burst(database, 300)
    _slow_fires(monkeypatch, clock, 0.001)  # 300 rows: 0.3 s a burst
    d = dispatcher(database, clock)
    at(clock, -1)
    reports = [r for r in _follow(d, clock, 25) if r.batches]
    assert len(reports) == 3
    # The first burst goes at the assumed pace (20,000 rows a second: 0.015 s
    # added to the margin), so it commits after its instant; it is timed.
    [first, second, third] = [max(b.committed_at for b in r.batches) for r in reports]
    assert first > START
    # The next ones start the margin plus the burst's 0.3 s before their
    # instant, so they commit the margin before it.
    assert _seconds(second) == pytest.approx(10 - AHEAD)
    assert _seconds(third) == pytest.approx(20 - AHEAD)
    # Decided as of their instants all the same: claimable at them, not late.
    assert {e.detail["late_ms"] for e in ledger(database)} == {0}
    assert {i.available_at for i in items(database)} == {START + k * 10 * SECOND for k in range(3)}
    assert check_exactly_once(database) == {"occurrences": 900, "max_coalesced": 1}


def test_the_lead_stops_at_its_cap(
    database: Database, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _burst(database, 300)
    _slow_fires(monkeypatch, clock, 0.005)  # 1.5 s a burst: more than MAX_LEAD
    d = dispatcher(database, clock)
    at(clock, -1)
    reports = _follow(d, clock, 1)
    assert reports[-1].fired == 300
    # Woken MAX_LEAD before the next instant, not the 1.75 s the burst would want.
    assert _seconds(clock.now()) == pytest.approx(10 - MAX_LEAD)
    assert d.tick().fired == 300
    assert ledger(database)[-1].detail["late_ms"] == 0


def test_without_fire_ahead_a_slow_burst_is_not_started_early(
    database: Database, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _burst(database, 300)
    _slow_fires(monkeypatch, clock, 0.001)
    d = dispatcher(database, clock, ahead=0.0)
    at(clock, -1)
    _follow(d, clock, 1)
    # Firing ahead off: the next burst waits for its instant, however slow the last.
    assert _seconds(clock.now()) == pytest.approx(10)
    assert d.tick().fired == 300
