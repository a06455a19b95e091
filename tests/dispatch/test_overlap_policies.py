"""Overlap `buffer_one` and `cancel_running` through Dispatcher.tick() and real claims, both databases.

- buffer_one: while an item runs, one occurrence is queued behind it and
  waits (no worker starts it while the first runs); a further occurrence
  is skipped, with its ledger event.
- cancel_running: a new occurrence asks the running item to stop (the fire
  is the actor), cancels a waiting one, and enqueues itself; the new item
  does not start until the old one has stopped.

- skip: over random cadences and run durations (hypothesis), the occurrences
  skipped are exactly those a simple model of the policy skips: an
  occurrence is skipped while the run it would follow has not finished.

The invariants are also checked over random sequences of fires, claims and
finishes (hypothesis): never two running items of one schedule, and never
more than one waiting item of a buffer_one schedule.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.store import cancels, limits, queue
from cronplane.store.database import Database
from cronplane.store.queue import item_from_row
from cronplane.store.tables import queue_items, schedules
from firing_support import (
    START,
    add_job,
    add_schedule,
    dispatcher,
    empty_firing_tables,
    items,
    ledger,
)

LEASE = timedelta(minutes=5)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def claim(database: Database, clock: FakeClock, worker: str = "w", limit: int = 10) -> list[Any]:
    with database.begin() as conn:
        return limits.claim(conn, worker, clock.now(), LEASE, limit)


def finish(database: Database, clock: FakeClock, item_id: UUID, worker: str = "w") -> None:
    with database.begin() as conn:
        assert queue.succeed(conn, item_id, worker, clock.now(), None)


def by_status(database: Database, sid: UUID) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items(database, sid):
        counts[item.status] = counts.get(item.status, 0) + 1
    return counts


def test_buffer_one_queues_one_behind_the_running_item(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database, overlap="buffer_one")
    d = dispatcher(database, clock)
    assert d.tick().fired == 1
    (first,) = claim(database, clock)
    clock.advance(60)
    assert d.tick().fired == 1  # only a running one: the new item waits behind it
    buffered = [i for i in items(database, sid) if i.status == "queued"]
    assert len(buffered) == 1 and buffered[0].exclusive
    assert claim(database, clock, "other") == []  # not started while the first runs
    clock.advance(60)
    report = d.tick()
    assert report.fired == 0
    skipped = ledger(database, sid)[-1]
    assert skipped.code == ev.SKIPPED_OVERLAP.text
    assert "buffer_one" in skipped.message
    assert skipped.detail["previous"] == "queued and running"
    assert by_status(database, sid) == {"running": 1, "queued": 1}
    finish(database, clock, first.id)
    (second,) = claim(database, clock, "other")
    assert second.id == buffered[0].id


def test_cancel_running_stops_the_running_item_and_enqueues(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database, overlap="cancel_running")
    d = dispatcher(database, clock)
    d.tick()
    (first,) = claim(database, clock)
    clock.advance(60)
    assert d.tick().fired == 1
    old = next(i for i in items(database, sid) if i.id == first.id)
    assert old.status == "running"  # its worker stops it
    assert old.cancel_requested_at == clock.now() and old.cancelled_by == "dispatcher"
    new = next(i for i in items(database, sid) if i.id != first.id)
    assert new.status == "queued" and new.exclusive
    # The ledger has the request (the fire as actor) and the fire itself.
    codes = [(e.code, e.actor) for e in ledger(database, sid)]
    assert codes[-2:] == [
        (ev.ITEM_CANCEL_REQUESTED.text, "dispatcher"),
        (ev.SCHEDULE_FIRED.text, "dispatcher"),
    ]
    fired = ledger(database, sid)[-1]
    assert fired.detail["previous"] == "running" and "cancel_running" in fired.message
    # The new item does not start while the old one still runs.
    assert claim(database, clock, "other") == []
    with database.read() as conn:
        asked = cancels.asked_of(conn, "w")
    assert asked == {first.id}
    with database.begin() as conn:
        assert cancels.finish_cancelled(conn, first, "w", clock.now()) == "dispatcher"
    (started,) = claim(database, clock, "other")
    assert started.id == new.id


def test_cancel_running_cancels_a_waiting_item_at_once(
    database: Database, clock: FakeClock
) -> None:
    add_job(database)
    sid = add_schedule(database, overlap="cancel_running")
    d = dispatcher(database, clock)
    d.tick()
    (waiting,) = items(database, sid)
    clock.advance(60)
    d.tick()
    statuses = {i.id: (i.status, i.cancelled_by) for i in items(database, sid)}
    assert statuses.pop(waiting.id) == ("cancelled", "dispatcher")
    assert list(statuses.values()) == [("queued", None)]
    assert ledger(database, sid)[-2].code == ev.ITEM_CANCELLED.text


STEPS = st.lists(
    st.sampled_from(["tick", "tick", "claim", "claim", "finish", "stop"]), min_size=4, max_size=30
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_never_two_running_items_of_one_schedule(database: Database, steps: list[str]) -> None:
    empty_firing_tables(database)
    clock = FakeClock(START)
    add_job(database)
    buffered = add_schedule(database, "buffered", overlap="buffer_one")
    cancelling = add_schedule(database, "cancelling", overlap="cancel_running")
    d = dispatcher(database, clock)
    workers = iter(range(10_000))
    for step in steps:
        if step == "tick":
            clock.advance(60)
            d.tick()
        elif step == "claim":
            claim(database, clock, f"w{next(workers)}", limit=2)
        else:
            with database.begin() as conn:
                running = conn.execute(
                    select(queue_items).where(queue_items.c.status == "running")
                ).all()
                for row in running[:1]:
                    if step == "stop" and row.cancel_requested_at is not None:
                        item = item_from_row(row)
                        cancels.finish_cancelled(conn, item, row.lease_owner, clock.now())
                    else:
                        queue.succeed(conn, row.id, row.lease_owner, clock.now(), None)
        for sid in (buffered, cancelling):
            counts = by_status(database, sid)
            assert counts.get("running", 0) <= 1, (step, counts)
        assert by_status(database, buffered).get("queued", 0) <= 1


def test_a_fire_carries_the_run_controls_onto_its_item(
    database: Database, clock: FakeClock
) -> None:
    # Both fire paths: the schedule's timeout over the job's, the job's max_concurrency.
    add_job(database, "limited", options={"timeout": 90, "max_concurrency": 4})
    own = add_schedule(database, "own", job="limited", overlap="allow")
    inherits = add_schedule(database, "inherits", job="limited", overlap="buffer_one")
    with database.begin() as conn:
        conn.execute(schedules.update().where(schedules.c.id == own).values(timeout=15))
    assert dispatcher(database, clock).tick().fired == 2
    (first,) = items(database, own)
    (second,) = items(database, inherits)
    assert (first.timeout, first.max_concurrency, first.exclusive) == (15, 4, False)
    assert (second.timeout, second.max_concurrency, second.exclusive) == (90, 4, True)


def skipped_by_model(instants: list[datetime], durations: list[timedelta]) -> list[datetime]:
    """The `skip` policy as a user reads it: an occurrence while the last run is
    unfinished is skipped; otherwise it runs (starting at once) for its duration."""
    skipped: list[datetime] = []
    runs = iter(durations)
    busy_until: datetime | None = None
    for instant in instants:
        if busy_until is not None and busy_until > instant:
            skipped.append(instant)
        else:
            busy_until = instant + next(runs)
    return skipped


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    cadence=st.sampled_from([1, 2, 3, 5]),
    seconds=st.lists(st.integers(1, 900), min_size=12, max_size=12),
)
def test_skip_skips_exactly_the_occurrences_the_policy_says(
    database: Database, cadence: int, seconds: list[int]
) -> None:
    empty_firing_tables(database)
    clock = FakeClock(START)
    add_job(database)
    sid = add_schedule(database, cron=f"*/{cadence} * * * *", overlap="skip")
    d = dispatcher(database, clock)
    instants = [START + timedelta(minutes=cadence * k) for k in range(len(seconds))]
    durations = [timedelta(seconds=s) for s in seconds]
    runs = iter(durations)
    running: tuple[UUID, datetime] | None = None
    for instant in instants:
        if running is not None and running[1] <= instant:  # it ends before the next is due
            clock.set(running[1])
            finish(database, clock, running[0])
            running = None
        clock.set(instant)
        if d.tick().fired:
            (started,) = claim(database, clock)  # a free worker starts it at once
            running = (started.id, instant + next(runs))
    skipped = [e.scheduled_for for e in ledger(database, sid) if e.code == ev.SKIPPED_OVERLAP.text]
    assert skipped == skipped_by_model(instants, durations)
