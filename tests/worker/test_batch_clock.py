"""The worker reads "now" once per claimed batch, not once per item.

On PostgreSQL the node's clock is the database's, so a read per item was a
round trip per item (bench/e2e_bench.py: ten times the cost of the item).
The expiry check before each item still sees time pass within the batch.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import worker_handlers

from cronplane.clock import FakeClock
from cronplane.processes.worker import Worker
from cronplane.store.database import Database
from firing_support import START, add_job, enqueue_items, item_row, items


@pytest.fixture(autouse=True)
def _calls() -> None:
    worker_handlers.CALLS.clear()


class CountingClock(FakeClock):
    """A FakeClock that counts how often "now" is read."""

    def __init__(self, start: datetime) -> None:
        super().__init__(start)
        self.reads = 0

    def now(self) -> datetime:
        self.reads += 1
        return super().now()

    def monotonic(self) -> float:
        return FakeClock.now(self).timestamp()  # local, as a real monotonic clock


def run_batch(database: Database, clock: CountingClock, count: int) -> int:
    """Enqueue `count` items, run them in one claimed batch; how many reads of now it took."""
    enqueue_items(database, [item_row(now=clock.now()) for _ in range(count)])
    worker = Worker(database, clock, heartbeat=False, jitter=lambda: 0.0, claim_batch=100, pace=0.0)
    before = clock.reads
    assert worker.run_once()
    return clock.reads - before


def test_reads_of_now_do_not_grow_with_the_batch(database: Database) -> None:
    clock = CountingClock(START)
    add_job(database, target="python:worker_handlers:ok")
    small = run_batch(database, clock, 3)
    large = run_batch(database, clock, 60)
    assert large == small
    assert all(item.status == "succeeded" for item in items(database))
    assert len(worker_handlers.CALLS) == 63


def test_an_item_that_expires_while_the_batch_runs_is_given_back(database: Database) -> None:
    clock = CountingClock(START)
    add_job(database, "slow", target="python:worker_handlers:hook")
    add_job(database, "next", target="python:worker_handlers:ok")
    now = clock.now()
    enqueue_items(
        database,
        [
            item_row("slow", now=now, priority=9),
            item_row("next", now=now, priority=1, expires_at=now + timedelta(seconds=60)),
        ],
    )
    # The first item takes two minutes (of the fake clock): the second expires meanwhile.
    worker_handlers.ON_RUN[:] = [lambda: clock.advance(120)]
    try:
        Worker(
            database, clock, heartbeat=False, jitter=lambda: 0.0, claim_batch=10, pace=0.0
        ).run_once()
    finally:
        worker_handlers.ON_RUN.clear()
    status = {item.job: item.status for item in items(database)}
    assert status == {"slow": "succeeded", "next": "queued"}
    assert worker_handlers.CALLS == []  # `ok` never ran
