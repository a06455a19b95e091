"""A claim read ahead of its instant (issue 32): nothing starts early, nothing twice.

Woken for an instant, an idle worker reads what a claim at it would take
(`Worker.read_ahead`) and claims as much as its slots can start then, ahead of
it (`claims.claim_read` as of the instant); at the instant those only start and
the rest is claimed in parts. What was cancelled, taken by another worker or
expired meanwhile is not claimed; a claim made ahead that is cancelled before
its instant never starts, and one whose worker stops is given back. SQLite and
PostgreSQL, an injected clock.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest
import worker_handlers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock, SystemClock
from cronplane.processes.node import WAKE_OTHERS_AFTER, Node, NodeOptions
from cronplane.processes.run_slots import GUESS_WAIT
from cronplane.processes.worker import Worker
from cronplane.store import cancels, claims, queue
from cronplane.store.database import Database
from firing_support import START, add_job, empty_firing_tables, enqueue_items, item_row, items

LEASE = timedelta(seconds=60)


@pytest.fixture(autouse=True)
def _calls() -> None:
    worker_handlers.CALLS.clear()


def _at(clock: FakeClock, seconds: float) -> None:
    clock.set(START + timedelta(seconds=seconds))


def _queue(database: Database, count: int, **values: Any) -> list[UUID]:
    """`count` items of job `job` claimable from START (queued before it)."""
    rows = [item_row(now=START, **values) for _ in range(count)]
    for n, row in enumerate(rows):
        row["payload"] = {"n": n}
    enqueue_items(database, rows)
    return [row["id"] for row in rows]


def _worker(database: Database, clock: FakeClock, **options: Any) -> Worker:
    return Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, concurrency=2, **options)


def _read_ahead_of(
    database: Database, count: int, pace: float | None = 0.0, target: str = "ok"
) -> tuple[FakeClock, Worker, list[UUID]]:
    """`count` items claimable at START, read ahead by an idle worker 0.3 s before it (and
    claimed ahead: all of them when items are known short, `pace` 0, or the pace is unknown,
    None: then one a slot sure and the rest a guess; one a slot when known slow)."""
    clock = FakeClock(START - timedelta(seconds=1))
    add_job(database, target=f"python:worker_handlers:{target}")
    ids = _queue(database, count)
    worker = _worker(database, clock, claim_batch=64, pace=pace)
    _at(clock, -0.3)
    worker.wake(START)
    worker.read_ahead()
    return clock, worker, ids


def _statuses(database: Database) -> Counter[str]:
    return Counter(item.status for item in items(database))


def test_a_claim_read_ahead_starts_nothing_before_its_instant(database: Database) -> None:
    clock, worker, _ = _read_ahead_of(database, 40)
    # Claimed ahead (the worker's, one attempt each), and none may start before START.
    claimed = items(database)
    assert {(i.status, i.lease_owner, i.attempts) for i in claimed} == {("running", worker.name, 1)}
    _at(clock, -0.01)
    assert worker.run_once() is False
    assert worker_handlers.CALLS == []
    _at(clock, 0.0)
    while worker.run_once():
        pass
    ran = Counter(payload["n"] for payload, _ in worker_handlers.CALLS)
    assert ran == Counter(range(40))  # each once
    assert all(context.attempt == 1 for _, context in worker_handlers.CALLS)
    assert _statuses(database) == {"succeeded": 40}


def test_what_changed_after_the_read_is_not_claimed(database: Database) -> None:
    # Items known slow (0.1 s): two (one a slot) claimed ahead, four read ahead only.
    clock, worker, ids = _read_ahead_of(database, 6, pace=0.1)
    assert _statuses(database) == {"running": 2, "queued": 4}
    _at(clock, 0.0)
    with database.begin() as conn:
        # One cancelled by an operator, two taken by another worker, after the read.
        cancelled = queue.get(conn, ids[0])
        assert cancelled is not None
        cancels.cancel_or_request(conn, cancelled, actor="ops", now=clock.now())
        taken = claims.claim_batch(conn, "other", clock.now(), LEASE, 2, fair=False)
    assert {item.payload["n"] for item in taken} <= {2, 3, 4, 5}  # not what was claimed
    assert worker.run_once() is True
    while worker.run_once():
        pass
    ran = sorted(payload["n"] for payload, _ in worker_handlers.CALLS)
    others = {item.payload["n"] for item in taken}
    assert ran == sorted(set(range(1, 6)) - others)
    assert _statuses(database) == {"succeeded": 3, "running": 2, "cancelled": 1}


def test_a_claim_made_ahead_and_cancelled_before_its_instant_never_starts(
    database: Database,
) -> None:
    clock, worker, ids = _read_ahead_of(database, 3)
    _at(clock, -0.2)
    with database.begin() as conn:
        item = queue.get(conn, ids[1])
        assert item is not None and item.status == "running"  # claimed, not started
        cancels.cancel_or_request(conn, item, actor="ops", now=clock.now())
    _at(clock, 0.0)
    while worker.run_once():
        pass
    assert sorted(payload["n"] for payload, _ in worker_handlers.CALLS) == [0, 2]
    by_id = {item.id: item for item in items(database)}
    assert (by_id[ids[1]].status, by_id[ids[1]].cancelled_by) == ("cancelled", "ops")
    assert _statuses(database) == {"succeeded": 2, "cancelled": 1}


def test_a_fresh_worker_claims_ahead_what_a_claim_of_short_items_would(
    database: Database,
) -> None:
    # Nothing timed yet: all of it is claimed ahead, and at the instant it only starts.
    clock, worker, _ = _read_ahead_of(database, 40, pace=None)
    assert _statuses(database) == {"running": 40}
    _at(clock, 0.0)
    while worker.run_once():
        pass
    assert Counter(payload["n"] for payload, _ in worker_handlers.CALLS) == Counter(range(40))
    assert {(i.status, i.attempts) for i in items(database)} == {("succeeded", 1)}


def test_a_fresh_workers_guesses_go_back_once_slow_items_hold_every_slot(
    database: Database,
) -> None:
    # Claimed ahead on a guess, the items prove slow: the two slots start one each, and the
    # rest are given back (queued, the attempt undone) once no slot took one for
    # GUESS_WAIT, not START_BOUND, so another worker can start them.
    worker_handlers.HOLD.clear()
    clock, worker, ids = _read_ahead_of(database, 10, pace=None, target="held")
    assert _statuses(database) == {"running": 10}
    _at(clock, 0.0)
    thread = threading.Thread(target=worker.run_once, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while worker.slots.waiting_count() > 8:  # both slots took their item (at the instant)
            assert time.monotonic() < deadline
            time.sleep(0.005)
        _at(clock, GUESS_WAIT * 0.8)
        time.sleep(0.1)  # the driver looks several times: not yet
        assert _statuses(database) == {"running": 10}
        _at(clock, GUESS_WAIT * 1.2)
        while _statuses(database) != {"running": 2, "queued": 8}:
            assert time.monotonic() < deadline, _statuses(database)
            time.sleep(0.01)
    finally:
        worker_handlers.HOLD.set()
        thread.join(timeout=10)
    by_id = {item.id: item for item in items(database)}
    assert [by_id[i].status for i in ids[:2]] == ["succeeded"] * 2  # the sure ones ran
    assert {(by_id[i].status, by_id[i].attempts) for i in ids[2:]} == {("queued", 0)}


def test_a_worker_holding_a_claim_made_ahead_claims_nothing_else_before_its_instant(
    database: Database,
) -> None:
    # Its slots are the instant's: an item claimed now could still be running then.
    clock, worker, _ = _read_ahead_of(database, 2)
    _at(clock, -0.2)
    late = item_row(now=clock.now())
    late["payload"] = {"n": "late"}
    enqueue_items(database, [late])
    assert worker.run_once() is False
    assert worker_handlers.CALLS == []
    assert _statuses(database) == {"running": 2, "queued": 1}
    _at(clock, 0.0)
    while worker.run_once():
        pass
    ran = [payload["n"] for payload, _ in worker_handlers.CALLS]
    assert (sorted(ran[:2]), ran[2:]) == ([0, 1], ["late"])  # the held ones first
    assert _statuses(database) == {"succeeded": 3}


def test_a_worker_stopped_before_the_instant_gives_its_claim_made_ahead_back(
    database: Database,
) -> None:
    _, worker, _ = _read_ahead_of(database, 5)
    assert _statuses(database) == {"running": 5}
    worker.stop()
    worker.close()
    assert {(i.status, i.lease_owner, i.attempts) for i in items(database)} == {("queued", None, 0)}
    assert worker_handlers.CALLS == []


def test_a_claim_made_ahead_takes_only_what_is_claimable_at_its_instant(
    database: Database,
) -> None:
    add_job(database, target="python:worker_handlers:ok")
    now = START - timedelta(seconds=0.3)
    rows = [
        item_row(now=START),  # claimable at the instant
        item_row(now=START + timedelta(seconds=1)),  # a second later
        item_row(now=START, expires_at=START - timedelta(seconds=0.1)),  # expired by then
    ]
    enqueue_items(database, rows)
    with database.read() as conn:
        read = [queue.get(conn, row["id"]) for row in rows]
    with database.begin() as conn:
        taken = claims.claim_read(conn, "w", now, LEASE, [i for i in read if i], at=START)
    assert [item.id for item in taken] == [rows[0]["id"]]
    with database.read() as conn:
        stored = queue.get(conn, rows[0]["id"])
    for claimed in (taken[0], stored):  # as returned, and as stored
        assert claimed is not None
        assert claimed.heartbeat_at == now  # when it was claimed
        assert claimed.started_at == START  # no sooner than its instant, until it starts


def test_an_instant_long_past_is_claimed_afresh(database: Database) -> None:
    clock, worker, _ = _read_ahead_of(database, 3)
    _at(clock, 5.0)  # the worker was held up: what it read may be stale
    while worker.run_once():
        pass
    assert sorted(p["n"] for p, _ in worker_handlers.CALLS) == [0, 1, 2]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(min_value=1, max_value=120),
    turns=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=40),
)
def test_workers_reading_the_same_instant_ahead_run_each_item_once(
    database: Database, count: int, turns: list[str]
) -> None:
    """Three workers read the same instant ahead, then claim in any order: every item
    runs exactly once (the property behind "one queue item, one run")."""
    empty_firing_tables(database)
    worker_handlers.CALLS.clear()
    clock = FakeClock(START - timedelta(seconds=1))
    add_job(database, target="python:worker_handlers:ok")
    _queue(database, count)
    workers = {
        name: _worker(database, clock, claim_batch=32, pace=0.0, name=name) for name in "abc"
    }
    _at(clock, -0.3)
    for worker in workers.values():
        worker.wake(START)
        worker.read_ahead()
    _at(clock, 0.0)
    for name in turns:
        workers[name].run_once()
    for worker in workers.values():
        while worker.run_once():
            pass
    ran = Counter(payload["n"] for payload, _ in worker_handlers.CALLS)
    assert ran == Counter(range(count))
    assert _statuses(database) == {"succeeded": count}


def test_a_node_wakes_one_worker_for_the_instant_and_the_others_just_after(
    database: Database,
) -> None:
    clock = FakeClock(START - timedelta(seconds=0.5))
    node = Node(database, NodeOptions(dispatcher=False, workers=3, alerts=False), clock)
    node.wake_workers(START)
    waits = sorted(worker.idle_wait() for worker in node.workers)
    assert waits == pytest.approx([0.5, 0.5 + WAKE_OTHERS_AFTER, 0.5 + WAKE_OTHERS_AFTER])
    # No workers (a dispatcher-only node): nothing to wake, nothing fails.
    Node(database, NodeOptions(dispatcher=False, workers=0, alerts=False), clock).wake_workers(
        START
    )


def _run_until_done(worker: Worker, database: Database, count: int) -> list[Any]:
    """Run the worker's real loop until `count` items succeeded; the items."""
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while _statuses(database) != {"succeeded": count}:
            assert time.monotonic() < deadline, _statuses(database)
            time.sleep(0.05)
    finally:
        worker.stop()
        thread.join(timeout=10)
    return items(database)


def test_items_claimed_ahead_start_at_their_instant_not_before(database: Database) -> None:
    """In the running loop, woken for an instant, a worker claims the items before it and
    starts them from it: the record shows each claimed (`heartbeat_at`, written by the
    claim) before the instant and started at or after it."""
    clock = SystemClock()
    add_job(database, target="python:worker_handlers:ok")
    at = clock.now() + timedelta(seconds=0.49)  # woken within READ_AHEAD of it
    enqueue_items(database, [item_row(now=at) for _ in range(100)])
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, claim_batch=256, pace=0)
    worker.wake(at)
    done = _run_until_done(worker, database, 100)
    assert all(i.heartbeat_at < at <= i.started_at <= i.finished_at for i in done)
    assert len(worker_handlers.CALLS) == 100


def test_a_part_starts_before_the_last_parts_outcomes_are_written(database: Database) -> None:
    """In the running loop, the next part of a claim read ahead is claimed and started as
    soon as it is due, and the outcomes wait for the last part: a write between parts held
    every later item's start behind it (issue 32, started − due). Items known slow at
    first (pace 0.1 s), one a slot is claimed ahead of the instant and the rest at it, in
    parts that grow as the pace is learned."""
    clock = SystemClock()
    add_job(database, target="python:worker_handlers:ok")
    at = clock.now() + timedelta(seconds=0.4)
    rows = [item_row(now=at) for _ in range(200)]
    enqueue_items(database, rows)
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, claim_batch=256, pace=0.1)
    worker.wake(at)
    done = _run_until_done(worker, database, 200)
    assert all(item.started_at is not None and item.started_at >= at for item in done)
    # Every item started, in parts, before the first outcome was written.
    last_start = max(item.started_at for item in done if item.started_at is not None)
    assert last_start <= min(item.updated_at for item in done)
    assert len(worker_handlers.CALLS) == 200
