"""Items fired ahead (issue 16) start at their instant: not before, and without a poll's wait.

A dispatcher firing ahead queues an instant's items before it, claimable
from it; the node then wakes its workers with that instant, so an idle
worker waits until the instant instead of a whole poll. SQLite and
PostgreSQL, with an injected clock.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import worker_handlers

from cronplane.clock import FakeClock
from cronplane.core.cron import parse
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.store.database import Database
from firing_support import START, add_job, add_schedule, items

EVERY_10S = parse("every 10 seconds").normalized


@pytest.fixture(autouse=True)
def _calls() -> None:
    worker_handlers.CALLS.clear()


def at(clock: FakeClock, seconds: float) -> None:
    clock.set(START + timedelta(seconds=seconds))


def test_a_fired_ahead_item_runs_at_its_instant_not_before(database: Database) -> None:
    clock = FakeClock(START - timedelta(seconds=1))
    add_job(database, target="python:worker_handlers:ok")
    sid = add_schedule(database, "ten", cron=EVERY_10S, overlap="allow", next_run=START)
    dispatcher = Dispatcher(database, clock, holder="node-a", ttl=90.0, fire_ahead=0.25)
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, poll=1.0)
    at(clock, -0.2)
    report = dispatcher.tick()
    assert report.fired == 1
    [batch] = report.batches
    assert batch.decided_at == START
    # Queued before its instant, but nobody may start it yet.
    assert worker.run_once() is False
    assert worker_handlers.CALLS == []
    # Woken with the instant, the idle worker waits until it, not a whole poll.
    worker.wake(batch.decided_at)
    assert worker.idle_wait() == pytest.approx(0.2)
    at(clock, 0.0)
    assert worker.run_once() is True
    assert len(worker_handlers.CALLS) == 1
    assert [i.status for i in items(database, sid)] == ["succeeded"]
    # Once the instant has passed, idle waits are plain polls again.
    at(clock, 0.5)
    assert worker.idle_wait() == 0.0
    assert worker.idle_wait() == pytest.approx(1.0)


def test_an_earlier_wake_wins(database: Database) -> None:
    clock = FakeClock(START)
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, poll=1.0)
    assert worker.idle_wait() == pytest.approx(1.0)
    worker.wake(START + timedelta(seconds=0.6))
    worker.wake(START + timedelta(seconds=0.3))
    worker.wake(START + timedelta(seconds=0.9))
    assert worker.idle_wait() == pytest.approx(0.3)
