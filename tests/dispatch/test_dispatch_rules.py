"""Every SPEC §6 rule through Dispatcher.tick(), with a fake clock, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.core.items import DEFAULT_EXPIRY
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.tables import schedule_state
from firing_support import (
    START,
    add_job,
    add_schedule,
    dispatcher,
    enqueue_items,
    item_row,
    items,
    ledger,
    schedule,
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def test_due_schedule_fires_once_with_ledger(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database)
    clock.advance(0.25)
    d = dispatcher(database, clock)
    report = d.tick()
    assert report.leader and report.fired == 1
    (item,) = items(database)
    assert item.schedule_id == sid and item.scheduled_for == START
    assert item.source == "schedule" and item.status == "queued"
    assert item.payload == {"name": "every-minute"}
    assert item.expires_at == clock.now() + DEFAULT_EXPIRY
    row = schedule(database, sid)
    assert row.last_run == clock.now()
    assert row.next_run == START + timedelta(minutes=1)
    (event,) = ledger(database, sid)
    assert event.code == ev.SCHEDULE_FIRED.text
    assert event.scheduled_for == START and event.fired_at == clock.now()
    assert event.item_id == item.id and event.detail["coalesced"] == 1
    # A second tick at the same instant fires nothing.
    assert d.tick().fired == 0
    assert len(items(database)) == 1


def test_not_due_is_not_fired(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database, next_run=START + timedelta(seconds=30))
    report = dispatcher(database, clock).tick()
    assert report.fired == 0 and items(database) == []
    assert 0 < report.sleep <= 1.0


def test_sleep_until_earliest_next_run(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database, next_run=START + timedelta(seconds=0.4))
    report = dispatcher(database, clock, max_sleep=1.0).tick()
    assert report.sleep == pytest.approx(0.4)


def test_disabled_row_is_not_fired(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database, enabled=False)
    assert dispatcher(database, clock).tick().fired == 0
    assert items(database) == [] and ledger(database) == []


def test_missed_occurrences_coalesce_into_one_fire(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, overlap="allow")
    clock.advance(minutes=10, seconds=5)  # dispatcher down for ten minutes
    d = dispatcher(database, clock)
    assert d.tick().fired == 1
    (item,) = items(database)
    assert item.scheduled_for == START + timedelta(minutes=10)
    (event,) = ledger(database, sid)
    assert event.detail["coalesced"] == 11
    assert event.detail["first_due"] == START.isoformat()
    assert schedule(database, sid).next_run == START + timedelta(minutes=11)
    # Then the normal cadence.
    clock.advance(minutes=1)
    assert d.tick().fired == 1
    assert [i.scheduled_for for i in items(database)][-1] == START + timedelta(minutes=11)


def test_overlap_skip_while_previous_item_active(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database)
    d = dispatcher(database, clock)
    assert d.tick().fired == 1
    clock.advance(minutes=1)
    report = d.tick()
    assert report.fired == 0 and report.counts[Outcome.SKIPPED_OVERLAP] == 1
    codes = [e.code for e in ledger(database, sid)]
    assert codes == [ev.SCHEDULE_FIRED.text, ev.SKIPPED_OVERLAP.text]
    assert ledger(database, sid)[-1].scheduled_for == START + timedelta(minutes=1)
    assert schedule(database, sid).next_run == START + timedelta(minutes=2)
    # Finish the item: the next occurrence fires again.
    with database.begin() as conn:
        item = queue.claim(conn, "w", clock.now(), timedelta(seconds=60))
        assert item is not None
        queue.succeed(conn, item.id, "w", clock.now(), None)
    clock.advance(minutes=1)
    assert d.tick().fired == 1


def test_overlap_allow_stacks_items(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, overlap="allow")
    d = dispatcher(database, clock)
    d.tick()
    clock.advance(minutes=1)
    assert d.tick().fired == 1
    assert len(items(database, sid)) == 2


def test_misfire_grace_skips_late_occurrence(database: Database, clock: FakeClock) -> None:
    add_job(database)
    sid = add_schedule(database, misfire_grace=5)
    clock.advance(seconds=20)
    report = dispatcher(database, clock).tick()
    assert report.counts[Outcome.SKIPPED_MISFIRE] == 1 and items(database) == []
    (event,) = ledger(database, sid)
    assert event.code == ev.SKIPPED_MISFIRE.text and event.scheduled_for == START
    assert schedule(database, sid).next_run == START + timedelta(minutes=1)
    assert schedule(database, sid).last_run == START - timedelta(hours=1)


def test_within_misfire_grace_fires(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database, misfire_grace=30)
    clock.advance(seconds=20)
    assert dispatcher(database, clock).tick().fired == 1


@pytest.mark.parametrize("status", ["inactive", "missing"])
def test_missing_or_inactive_job(database: Database, clock: FakeClock, status: str) -> None:
    if status == "inactive":
        add_job(database, status="inactive")
    sid = add_schedule(database)
    report = dispatcher(database, clock).tick()
    assert report.counts[Outcome.JOB_MISSING] == 1 and items(database) == []
    (event,) = ledger(database, sid)
    assert event.code == ev.JOB_MISSING.text
    row = schedule(database, sid)
    assert row.enabled and row.next_run == START + timedelta(minutes=1)


def test_job_in_another_stack_is_missing(database: Database, clock: FakeClock) -> None:
    add_job(database, stack="other")
    add_schedule(database)
    assert dispatcher(database, clock).tick().counts[Outcome.JOB_MISSING] == 1


def test_no_further_occurrence_is_a_normal_end(database: Database, clock: FakeClock) -> None:
    # The last occurrence fires as usual; the row ends (enabled, next_run NULL), not disabled.
    add_job(database)
    last = add_schedule(database, "last", cron="never-again")
    report = dispatcher(database, clock).tick()
    assert report.fired == 1 and report.counts[Outcome.CALC_FAILED] == 0
    row = schedule(database, last)
    assert row.enabled and row.next_run is None and row.revision == 1 and row.run_count == 1
    fired, ended = ledger(database, last)
    assert fired.code == ev.SCHEDULE_FIRED.text and fired.detail["next_run"] is None
    assert ended.code == ev.SCHEDULE_ENDED.text and ended.detail["reason"] == "no_occurrence"
    assert ended.scheduled_for == fired.scheduled_for == START
    assert dispatcher(database, clock).tick().fired == 0


@pytest.mark.parametrize("cron", ["broken"])
def test_next_run_failure_disables_row_and_loop_goes_on(
    database: Database, clock: FakeClock, cron: str
) -> None:
    add_job(database)
    bad = add_schedule(database, "bad", cron=cron)
    good = add_schedule(database, "good")
    report = dispatcher(database, clock).tick()
    assert report.fired == 1 and report.counts[Outcome.CALC_FAILED] == 1
    row = schedule(database, bad)
    assert not row.enabled and row.next_run is None and row.revision == 2
    (event,) = ledger(database, bad)
    assert event.code == ev.NEXT_RUN_FAILED.text and event.detail["error"]
    assert [i.schedule_id for i in items(database)] == [good]


def test_row_disabled_between_scan_and_fire_is_skipped(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database)
    with database.begin() as conn:
        conn.execute(update(schedule_state).where(schedule_state.c.id == sid).values(enabled=False))
    assert dispatcher(database, clock).tick().fired == 0
    assert ledger(database) == []


def test_many_due_rows_fire_in_batches(database: Database, clock: FakeClock) -> None:
    from firing_support import add_schedules, schedule_row

    add_job(database)
    add_schedules(database, [schedule_row(f"s{i}", next_run=START) for i in range(25)])
    report = dispatcher(database, clock, batch_size=10).tick()
    assert report.fired == 25 and len(report.batches) == 3
    assert len(items(database)) == 25 and len(ledger(database)) == 25


def test_job_options_shape_the_item(database: Database, clock: FakeClock) -> None:
    add_job(database, options={"priority": 7, "max_attempts": 5, "expires_after": 60})
    add_schedule(database)
    dispatcher(database, clock).tick()
    (item,) = items(database)
    assert item.priority == 7 and item.max_attempts == 5
    assert item.expires_at == clock.now() + timedelta(seconds=60)


def test_unique_key_forbids_second_item_for_an_occurrence(
    database: Database, clock: FakeClock
) -> None:
    from sqlalchemy.exc import IntegrityError

    add_job(database)
    sid = add_schedule(database)
    dispatcher(database, clock).tick()
    (item,) = items(database)
    again = item_row(
        source="schedule", now=clock.now(), schedule_id=sid, scheduled_for=item.scheduled_for
    )
    with pytest.raises(IntegrityError):
        enqueue_items(database, [again])


def test_a_duplicate_occurrence_in_a_fire_batch_rolls_the_whole_batch_back(
    database: Database, clock: FakeClock
) -> None:
    """The batch path (executemany / COPY) is held by the same unique key, as a DB error."""
    add_job(database)
    other = add_schedule(database, "other")
    # overlap=allow, so the fire reaches the insert instead of skipping for overlap.
    sid = add_schedule(database, overlap="allow")
    # An item for this occurrence already exists (as if another leader's fire had landed).
    enqueue_items(
        database,
        [item_row(source="schedule", now=clock.now(), schedule_id=sid, scheduled_for=START)],
    )
    clock.advance(0.25)
    report = dispatcher(database, clock).tick()
    # Reported as a database error (the loop backs off), not raised as a crash.
    assert report.error is not None and report.fired == 0
    # Nothing of the batch landed: no second item, no ledger, next_run unchanged.
    assert len(items(database)) == 1
    assert ledger(database, sid) == [] and ledger(database, other) == []
    assert schedule(database, sid).next_run == START
    assert schedule(database, other).next_run == START
