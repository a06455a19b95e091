"""A ledger event records its lateness (issue 16), on SQLite and PostgreSQL.

`detail.late_ms` is the fire instant (the batch's clock, the event's
`fired_at`) minus the instant the occurrence was meant to fire: its
`scheduled_for` plus the row's jitter offset. A coalesced fire is late from
its latest occurrence (the one it stands for), not from the first missed one.
Rows that share a decision share one plan, so they share one value.
"""

from __future__ import annotations

from datetime import timedelta

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.store.database import Database
from firing_support import (
    START,
    add_job,
    add_schedule,
    add_schedules,
    dispatcher,
    ledger,
    schedule_row,
)

EVERY_10S = "@every 10s"


def test_a_fire_records_how_late_it_was(database: Database) -> None:
    add_job(database)
    on_time = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow")
    clock = FakeClock(START + timedelta(milliseconds=37))
    fires = dispatcher(database, clock)
    assert fires.tick().fired == 1
    clock.set(START + timedelta(seconds=10, milliseconds=2))
    assert fires.tick().fired == 1
    events = ledger(database, on_time)
    assert [e.code for e in events] == [ev.SCHEDULE_FIRED.text] * 2
    assert [e.detail["late_ms"] for e in events] == [37, 2]
    for event in events:
        late = event.fired_at - event.scheduled_for
        assert event.detail["late_ms"] == round(late / timedelta(milliseconds=1))


def test_lateness_is_measured_from_the_jittered_instant(database: Database) -> None:
    add_job(database)
    # Nominal 10:00:00, this row's fire instant 10:00:07 (stored next_run).
    jittered = add_schedule(
        database, "spread", cron="* * * * *", jitter_offset=7, next_run=START + timedelta(seconds=7)
    )
    clock = FakeClock(START + timedelta(seconds=7, milliseconds=120))
    assert dispatcher(database, clock).tick().fired == 1
    (event,) = ledger(database, jittered)
    assert event.scheduled_for == START  # nominal, as the unique key
    assert event.detail["jitter_offset"] == 7
    assert event.detail["late_ms"] == 120  # not 7,120


def test_a_coalesced_fire_is_late_from_its_latest_occurrence(database: Database) -> None:
    add_job(database)
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow")
    clock = FakeClock(START + timedelta(seconds=60, milliseconds=450))  # a minute away
    assert dispatcher(database, clock).tick().fired == 1
    (event,) = ledger(database, sid)
    assert event.detail["coalesced"] == 7  # 10:00:00 ... 10:01:00
    assert event.scheduled_for == START + timedelta(seconds=60)
    assert event.detail["late_ms"] == 450


def test_a_burst_shares_its_lateness_per_due_instant(database: Database) -> None:
    add_job(database)
    rows = [schedule_row(f"a{n}", next_run=START, cron=EVERY_10S) for n in range(50)]
    rows += [
        schedule_row(f"b{n}", next_run=START + timedelta(seconds=10), cron=EVERY_10S)
        for n in range(50)
    ]
    add_schedules(database, rows)
    clock = FakeClock(START + timedelta(seconds=10, milliseconds=5))
    assert dispatcher(database, clock).tick().fired == 100
    late = {e.schedule_name: e.detail["late_ms"] for e in ledger(database)}
    assert {late[f"a{n}"] for n in range(50)} == {5}  # coalesced to 10:00:10 as well
    assert {late[f"b{n}"] for n in range(50)} == {5}


def test_a_skipped_occurrence_records_its_lateness_too(database: Database) -> None:
    add_job(database)
    sid = add_schedule(database, "graced", cron="* * * * *", misfire_grace=10)
    clock = FakeClock(START + timedelta(seconds=30))
    dispatcher(database, clock).tick()
    (event,) = ledger(database, sid)
    assert event.code == ev.SKIPPED_MISFIRE.text
    assert event.detail["late_ms"] == 30_000
