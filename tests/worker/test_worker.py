"""The worker: claim without double-claiming, run python targets, retry, expire, recover."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import worker_handlers
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.backoff import RetryPolicy
from cronplane.core.items import DEFAULT_MAX_ATTEMPTS
from cronplane.errors import InvalidTarget
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.tables import events
from cronplane.targets import RunContext, Targets, UnknownTargetKind
from cronplane.targets.python import PythonTarget, load_callable
from firing_support import (
    START,
    add_job,
    add_schedule,
    enqueue_items,
    item_row,
    items,
    occurrences,
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture(autouse=True)
def _calls() -> None:
    worker_handlers.CALLS.clear()


def worker(database: Database, clock: FakeClock, name: str = "w1") -> Worker:
    return Worker(database, clock, name=name, heartbeat=False, jitter=lambda: 0.0)


def fire(database: Database, clock: FakeClock) -> None:
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()


def codes(database: Database) -> list[str]:
    with database.read() as conn:
        return [r.code for r in conn.execute(select(events.c.code).order_by(events.c.id))]


def test_scheduled_item_runs_with_payload_and_context(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:ok")
    sid = add_schedule(database, payload={"batch": 100})
    fire(database, clock)
    w = worker(database, clock)
    assert w.run_once() is True
    assert w.run_once() is False
    (item,) = items(database)
    assert item.status == "succeeded" and item.attempts == 1
    assert item.result == {"echo": {"batch": 100}, "attempt": 1}
    payload, context = worker_handlers.CALLS[0]
    assert payload == {"batch": 100}
    assert context.tenant == "acme" and context.stack == "default"
    assert context.environment == "default" and context.schedule == "every-minute"
    assert context.schedule_id == sid and context.scheduled_for == START
    assert context.attempt == 1 and context.source == "schedule"
    assert ev.ITEM_SUCCEEDED.text in codes(database)


def test_failure_retries_with_backoff_then_fails(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:boom", options={"max_attempts": 2})
    add_schedule(database)
    fire(database, clock)
    w = worker(database, clock)
    assert w.run_once()
    (item,) = items(database)
    assert item.status == "queued" and item.attempts == 1
    assert "boom on attempt 1" in item.error
    assert item.available_at == clock.now() + timedelta(seconds=RetryPolicy().delay(1))
    assert w.run_once() is False  # not yet available
    clock.advance(RetryPolicy().delay(1))
    assert w.run_once()
    (item,) = items(database)
    assert item.status == "failed" and item.attempts == 2 and item.finished_at == clock.now()
    assert codes(database)[-2:] == [ev.ITEM_RETRY.text, ev.ITEM_FAILED.text]


def test_unknown_target_kind_fails_at_once(database: Database, clock: FakeClock) -> None:
    """No retry: the job keeps its default attempts, yet the first one is the last."""
    # A worker built without the celery bridge (the default worker has one).
    add_job(database, target="celery:tasks.add")
    add_schedule(database)
    fire(database, clock)
    python_only = Targets({"python": PythonTarget()})
    outcomes: list[str] = []
    w = Worker(
        database, clock, name="w1", heartbeat=False, targets=python_only, on_outcome=outcomes.append
    )
    assert w.run_once()
    (item,) = items(database)
    assert item.max_attempts == DEFAULT_MAX_ATTEMPTS > 1
    assert item.status == "failed" and item.attempts == 1 and outcomes == ["failed"]
    assert item.error.startswith(f"{InvalidTarget.code.text}: no runner for 'celery'")
    assert codes(database)[-1] == ev.ITEM_FAILED.text
    assert not w.run_once()  # nothing requeued


def test_missing_job_fails_without_retry(database: Database, clock: FakeClock) -> None:
    enqueue_items(database, [item_row("gone", now=clock.now())])
    worker(database, clock).run_once()
    (item,) = items(database)
    assert item.status == "failed" and item.error.startswith("job missing")


def test_non_json_result_is_stored_as_repr(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:opaque")
    add_schedule(database)
    fire(database, clock)
    worker(database, clock).run_once()
    assert "repr" in items(database)[0].result


def test_claim_order_priority_then_age(database: Database, clock: FakeClock) -> None:
    ages = (("low", 0, 30), ("high", 5, 0), ("old-low", 0, 60))
    enqueue_items(
        database,
        [
            item_row(job, now=clock.now() - timedelta(seconds=age), priority=priority)
            for job, priority, age in ages
        ],
    )
    order = []
    for _ in range(3):
        with database.begin() as conn:
            item = queue.claim(conn, "w", clock.now(), timedelta(seconds=60))
            assert item is not None
            order.append(item.job)
    assert order == ["high", "old-low", "low"]


def test_concurrent_claims_never_share_an_item(database: Database) -> None:
    clock = FakeClock(START)
    enqueue_items(database, [item_row(f"j{n}", now=clock.now()) for n in range(40)])
    claimed: list[str] = []
    lock = threading.Lock()

    def claimer(name: str) -> None:
        while True:
            with database.begin() as conn:
                item = queue.claim(conn, name, clock.now(), timedelta(seconds=60))
            if item is None:
                return
            with lock:
                claimed.append(str(item.id))

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 40 and len(set(claimed)) == 40


def test_expired_item_is_not_claimed_and_is_swept(database: Database, clock: FakeClock) -> None:
    from cronplane.service import housekeeping

    add_job(database, target="python:worker_handlers:ok")
    add_schedule(database)
    fire(database, clock)
    clock.advance(hours=5, seconds=1)
    assert worker(database, clock).run_once() is False
    assert housekeeping.expire(database, clock) == {"expired": 1, "recovered": 0}
    assert items(database)[0].status == "expired"
    assert ev.ITEM_EXPIRED.text in codes(database)


def test_lapsed_worker_lease_is_recovered(database: Database, clock: FakeClock) -> None:
    from cronplane.service import housekeeping

    add_job(database, options={"max_attempts": 2})
    add_schedule(database)
    fire(database, clock)
    with database.begin() as conn:
        claimed = queue.claim(conn, "dead", clock.now(), timedelta(seconds=30))
    assert claimed is not None
    clock.advance(31)
    assert housekeeping.expire(database, clock)["recovered"] == 1
    (item,) = items(database)
    assert item.status == "queued" and item.lease_owner is None
    # The dead worker's late outcome is refused: the item is no longer its own.
    with database.begin() as conn:
        assert not queue.succeed(conn, item.id, "dead", clock.now(), None)


def test_heartbeat_extends_lease(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database)
    fire(database, clock)
    with database.begin() as conn:
        item = queue.claim(conn, "w", clock.now(), timedelta(seconds=30))
        assert item is not None
        clock.advance(20)
        assert queue.heartbeat(conn, item.id, "w", clock.now(), timedelta(seconds=30))
        assert not queue.heartbeat(conn, item.id, "other", clock.now(), timedelta(seconds=30))
    assert items(database)[0].lease_expires_at == clock.now() + timedelta(seconds=30)


def test_python_target_loading() -> None:
    assert load_callable("worker_handlers:Jobs.nested")({}, None) == "nested"
    with pytest.raises(ValueError):
        load_callable("no-colon")
    with pytest.raises(ImportError):
        load_callable("no_such_module_xyz:f", ("no_such_module_xyz",))
    targets = Targets({"python": PythonTarget()})
    with pytest.raises(UnknownTargetKind):
        targets.resolve("webhook:https://example.invalid/")
    runner, spec = targets.resolve("python:worker_handlers:ok")
    assert spec == "worker_handlers:ok" and isinstance(runner, PythonTarget)
    assert RunContext.__slots__  # frozen value type


def test_backoff_policy() -> None:
    policy = RetryPolicy(max_attempts=4, base_seconds=10, factor=2, cap_seconds=25, jitter=0.5)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [10, 20, 25, 25]
    assert policy.delay(1, 0.999) == pytest.approx(5.005)
    assert policy.should_retry(3) and not policy.should_retry(4)
    assert policy.delay(10_000) == 25
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)


def test_outcomes_are_reported(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:boom", options={"max_attempts": 2})
    add_schedule(database)
    fire(database, clock)
    seen: list[str] = []
    w = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, on_outcome=seen.append)
    w.run_once()
    clock.advance(hours=1)
    w.run_once()
    assert seen == ["retry", "failed"]


def test_node_feeds_metrics(database: Database, clock: FakeClock) -> None:
    from cronplane.processes.node import Node, NodeOptions

    add_job(database)
    add_schedule(database)
    node = Node(database, NodeOptions(workers=1), clock)
    assert node.dispatcher is not None and node.dispatcher.on_tick is not None
    report = node.dispatcher.tick()
    assert report.fired == 1
    node.dispatcher.on_tick(report)  # would raise on a wiring mistake
    assert node.workers[0]._wake.is_set()  # a fire wakes this process's workers
    assert node.workers[0].on_outcome is not None
