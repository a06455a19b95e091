"""A claim read ahead of its instant (issue 32): nothing starts early, nothing twice.

Woken for an instant, an idle worker reads what a claim at it would take
(`Worker.read_ahead`) and at the instant claims it in parts that only write
(`claims.claim_read`). What was cancelled, taken by another worker or
expired meanwhile is not claimed. SQLite and PostgreSQL, an injected clock.
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


def _read_ahead_of(database: Database, count: int) -> tuple[FakeClock, Worker, list[UUID]]:
    """`count` items claimable at START, read ahead by an idle worker 0.3 s before it."""
    clock = FakeClock(START - timedelta(seconds=1))
    add_job(database, target="python:worker_handlers:ok")
    ids = _queue(database, count)
    worker = _worker(database, clock, claim_batch=64, pace=0.0)
    _at(clock, -0.3)
    worker.wake(START)
    worker.read_ahead()
    return clock, worker, ids


def _statuses(database: Database) -> Counter[str]:
    return Counter(item.status for item in items(database))


def test_a_claim_read_ahead_starts_nothing_before_its_instant(database: Database) -> None:
    clock, worker, _ = _read_ahead_of(database, 40)
    # Read, not claimed: every item is still queued, and none may start before START.
    assert _statuses(database) == {"queued": 40}
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
    clock, worker, ids = _read_ahead_of(database, 6)
    _at(clock, 0.0)
    with database.begin() as conn:
        # One cancelled by an operator, two taken by another worker, after the read.
        cancelled = queue.get(conn, ids[0])
        assert cancelled is not None
        cancels.cancel_or_request(conn, cancelled, actor="ops", now=clock.now())
        taken = claims.claim_batch(conn, "other", clock.now(), LEASE, 2, fair=False)
    assert worker.run_once() is True
    while worker.run_once():
        pass
    ran = sorted(payload["n"] for payload, _ in worker_handlers.CALLS)
    others = {item.payload["n"] for item in taken}
    assert ran == sorted(set(range(1, 6)) - others)
    assert _statuses(database) == {"succeeded": 3, "running": 2, "cancelled": 1}


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


def test_a_part_starts_before_the_last_parts_outcomes_are_written(database: Database) -> None:
    """In the running loop, the next part of a claim read ahead is claimed and started as
    soon as it is due, and the outcomes wait for the last part: a write between parts held
    every later item's start behind it (issue 32, started − due)."""
    clock = SystemClock()
    add_job(database, target="python:worker_handlers:ok")
    at = clock.now() + timedelta(seconds=0.4)
    rows = [item_row(now=at) for _ in range(200)]
    enqueue_items(database, rows)
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, claim_batch=256, pace=0)
    worker.wake(at)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while _statuses(database) != {"succeeded": 200}:
            assert time.monotonic() < deadline, _statuses(database)
            time.sleep(0.05)
    finally:
        worker.stop()
        thread.join(timeout=10)
    done = items(database)
    assert all(item.started_at is not None and item.started_at >= at for item in done)
    # Every item started, in parts (32, 64, 104), before the first outcome was written.
    last_start = max(item.started_at for item in done if item.started_at is not None)
    assert last_start <= min(item.updated_at for item in done)
    assert len(worker_handlers.CALLS) == 200
