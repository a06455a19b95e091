"""Fire lanes: on PostgreSQL a burst is fired by several transactions at once.

PostgreSQL runs each connection's statements on its own server process, so
two fire transactions over disjoint due rows (FOR UPDATE SKIP LOCKED) use two
cores. The fence is then a shared lock on the lease row: the leader's lanes
hold it together, and a takeover still waits until every lane has committed.
SQLite has one writer: there the dispatcher always fires one batch at a time.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from cronplane.clock import FakeClock
from cronplane.core.dst import DstPolicy
from cronplane.core.firing import NextAfter
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.fire_lanes import lane_plan
from cronplane.store import lease
from cronplane.store.database import Database
from firing_support import (
    START,
    add_job,
    add_schedules,
    check_exactly_once,
    items,
    occurrences,
    schedule_row,
)

TTL = timedelta(seconds=10)


def due_rows(database: Database, count: int) -> None:
    add_job(database)
    add_schedules(database, [schedule_row(f"s{n:05d}", next_run=START) for n in range(count)])


@pytest.mark.parametrize(
    ("due", "lanes", "batch", "plan"),
    [
        (0, 2, 5000, []),
        (3, 2, 5000, [5000]),  # a few rows: one transaction, nothing to split
        (10_000, 2, 5000, [5000, 5000]),
        (6_000, 2, 5000, [3000, 3000]),  # split evenly, not 5,000 + 1,000
        (600, 2, 5000, [500, 500]),  # a lane takes at least 500 rows
        (900, 3, 5000, [500, 500]),
        (100, 2, 50, [50, 50]),  # ...or a whole batch, when batches are smaller
        (10_000, 1, 5000, [5000]),
    ],
)
def test_lane_plan_splits_a_burst_evenly(due: int, lanes: int, batch: int, plan: list[int]) -> None:
    assert lane_plan(due, lanes=lanes, batch_size=batch) == plan


def test_lanes_fire_each_due_row_exactly_once(database: Database) -> None:
    due_rows(database, 700)
    clock = FakeClock(START)
    node = Dispatcher(database, clock, holder="a", batch_size=50, lanes=3, occurrences=occurrences)
    report = node.tick()
    assert report.error is None and report.fired == 700
    assert sum(batch.fired for batch in report.batches) == 700
    assert check_exactly_once(database)["occurrences"] == 700
    assert len(items(database)) == 700
    # Nothing is due any more: the next tick fires nothing.
    assert node.tick().fired == 0


@pytest.mark.postgres
def test_lanes_run_at_the_same_time_on_postgres(pg_database: Database) -> None:
    due_rows(pg_database, 200)
    # Each fire transaction computes its rows' next run while it is open:
    # two transactions must reach that point together, or the barrier breaks.
    barrier = threading.Barrier(2, timeout=10)

    def meeting_occurrences(cron: str, timezone: str, dst: DstPolicy) -> NextAfter:
        barrier.wait()
        return occurrences(cron, timezone, dst)

    node = Dispatcher(
        pg_database,
        FakeClock(START),
        holder="a",
        batch_size=100,
        lanes=2,
        occurrences=meeting_occurrences,
    )
    report = node.tick()
    assert report.error is None and report.fired == 200
    assert [batch.selected for batch in report.batches] == [100, 100]
    check_exactly_once(pg_database)


@pytest.mark.postgres
def test_sibling_lanes_share_the_fence_and_a_takeover_waits_for_both(
    pg_database: Database,
) -> None:
    clock = FakeClock(START)
    with pg_database.begin() as conn:
        term = lease.acquire(conn, "g", "a", known_term=None, now=clock.now(), ttl=TTL)
    assert term == 1
    lanes = [pg_database.engine.connect() for _ in range(2)]
    transactions = [conn.begin() for conn in lanes]
    for conn in lanes:
        lease.guard(conn, TTL)
        lease.fence(conn, "g", "a", term, clock.now())  # the second does not wait for the first
    clock.advance(seconds=TTL.total_seconds() + 1)  # the lease expires while both are open

    took_over: list[int | None] = []

    def follower() -> None:
        with pg_database.begin() as conn:
            took_over.append(
                lease.acquire(conn, "g", "b", known_term=None, now=clock.now(), ttl=TTL)
            )

    thread = threading.Thread(target=follower)
    thread.start()
    transactions[0].commit()
    thread.join(timeout=0.5)
    assert thread.is_alive(), "the takeover went ahead while a lane was still open"
    transactions[1].commit()
    thread.join(timeout=10)
    assert not thread.is_alive() and took_over == [2]
    for conn in lanes:
        conn.close()


def test_a_deposed_leader_s_lanes_commit_nothing(database: Database) -> None:
    due_rows(database, 300)
    clock = FakeClock(START)
    kwargs: dict[str, Any] = {"batch_size": 50, "lanes": 3, "occurrences": occurrences}
    a = Dispatcher(database, clock, holder="a", ttl=TTL.total_seconds(), **kwargs)
    b = Dispatcher(database, clock, holder="b", ttl=TTL.total_seconds(), **kwargs)
    with database.begin() as conn:  # a leads, then its lease expires and b takes over
        a.term = lease.acquire(conn, a.group, "a", known_term=None, now=clock.now(), ttl=TTL)
    a._renewed_mono = clock.monotonic()
    clock.advance(seconds=TTL.total_seconds() + 1)
    with database.begin() as conn:
        lease.acquire(conn, b.group, "b", known_term=None, now=clock.now(), ttl=TTL)
    a._renewed_mono = clock.monotonic()  # a believes it renewed just now
    report = a.tick()
    assert report.fenced and report.fired == 0
    assert items(database) == []


@pytest.mark.postgres
def test_a_new_leader_readies_its_lanes_before_the_first_burst(pg_database: Database) -> None:
    due_rows(pg_database, 300)
    clock = FakeClock(START - timedelta(seconds=30))
    fences: list[str] = []

    def count_fences(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("SELECT leases.term") and "FOR SHARE" in statement:
            fences.append(threading.current_thread().name)

    event.listen(pg_database.engine, "before_cursor_execute", count_fences)
    node = Dispatcher(
        pg_database, clock, holder="a", batch_size=100, lanes=2, occurrences=occurrences
    )
    # Nothing is due: the new term runs one empty fire transaction per lane,
    # so both lanes' connections are open before the burst.
    report = node.tick()
    assert report.leader and report.fired == 0 and report.batches == ()
    assert len(fences) == 2 and len(set(fences)) == 2
    assert pg_database.engine.pool.checkedin() >= 2  # type: ignore[attr-defined]
    assert items(pg_database) == []
    # Once per term: a later idle tick runs none.
    assert node.tick().fired == 0 and len(fences) == 2
    clock.advance(30)
    report = node.tick()
    assert report.error is None and report.fired == 300
    check_exactly_once(pg_database)
