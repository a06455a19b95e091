"""Python targets' log records, captured per item (issue 39): a record lands in the
attempt whose call emitted it, never another thread's item, and within the cap."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

import pytest
import worker_handlers
from sqlalchemy import update

from cronplane.clock import FakeClock
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store import attempts, queue
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from cronplane.targets import output
from firing_support import START, TENANT, add_job, enqueue_items, item_row, items


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def with_payload(payload: dict[str, object], **values: object) -> dict[str, object]:
    return item_row(now=START, **values) | {"payload": payload}


def drain(worker: Worker, clock: FakeClock) -> None:
    try:
        while worker.run_once():
            clock.advance(3600)  # past any retry's backoff
    finally:
        worker.close()


def test_a_python_targets_log_lines_are_its_attempts_output(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, target="python:worker_handlers:chatty", options={"max_attempts": 2})
    enqueue_items(database, [with_payload({"fail": True}, max_attempts=2)])
    drain(Worker(database, clock, name="w1", heartbeat=False, jitter=lambda: 0.0), clock)
    (row,) = items(database)
    assert row.status == "failed"
    log = RunService(Context(database, clock)).item_logs(TENANT, row.id)
    assert [(a.attempt, a.outcome) for a in log.attempts] == [(1, "retry"), (2, "failed")]
    for number, attempt in enumerate(log.attempts, start=1):
        assert attempt.output is not None
        (line,) = attempt.output["log"].splitlines()
        assert line.endswith(
            f"WARNING worker_handlers.output: chatty {row.id} attempt {number} says hi"
        )
        assert attempt.error == f"RuntimeError: chatty failed on attempt {number}"


def test_two_items_at_once_on_two_threads_each_keep_only_their_own_lines(
    database: Database, clock: FakeClock
) -> None:
    worker_handlers.PAIR.reset()
    add_job(database, target="python:worker_handlers:paired")
    enqueue_items(database, [item_row(now=START) for _ in range(2)])
    # A record of this (the test's) thread while they run must land in neither.
    logging.getLogger("worker_handlers.output").warning("the test's own line")
    drain(Worker(database, clock, concurrency=2, heartbeat=False), clock)
    rows = items(database)
    assert [r.status for r in rows] == ["succeeded"] * 2, [r.error for r in rows]
    runs = RunService(Context(database, clock))
    for row in rows:
        (attempt,) = runs.item_logs(TENANT, row.id).attempts
        assert attempt.output is not None
        lines = [line.partition(": ")[2] for line in attempt.output["log"].splitlines()]
        assert lines == [f"first line of {row.id}", f"second line of {row.id}"]


def test_the_log_cap_keeps_the_tail_and_says_what_was_cut(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, target="python:worker_handlers:flood")
    enqueue_items(database, [with_payload({"lines": 2000})])
    drain(Worker(database, clock, heartbeat=False), clock)
    (row,) = items(database)
    (attempt,) = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert attempt.output is not None
    text = attempt.output["log"]
    marker, _, kept = text.partition("\n")
    assert marker.startswith("[… ") and marker.endswith(" characters cut …]")
    cut = int(marker.split()[1])
    assert len(kept) <= output.LOG_LIMIT
    lines = kept.splitlines()
    # The newest line is kept, whole lines only, and what went is counted exactly.
    assert lines[-1].endswith(f"line {1999:06d} {'x' * 100}")
    line_length = len(lines[-1]) + 1
    assert cut + len(kept) == 2000 * line_length


def test_records_outside_any_attempt_are_not_kept() -> None:
    attempt = output.RunOutput(logs=True)
    other = output.RunOutput(logs=False)
    log = logging.getLogger("worker_handlers.output")
    log.warning("before")
    with output.capturing(attempt):
        log.warning("inside")
        with output.capturing(other):  # a non-python attempt keeps no records
            log.warning("nested")
    log.warning("after")
    document = attempt.document()
    assert document is not None
    assert [line.rpartition(": ")[2] for line in document["log"].splitlines()] == ["inside"]
    assert other.document() is None


@pytest.fixture(autouse=True)
def _root_warning() -> Iterator[None]:
    # The capture sees what passes the logger's level: WARNING unless configured.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)
    yield
    root.setLevel(level)


def test_attempts_go_with_their_items_when_finished_items_are_pruned(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, target="python:worker_handlers:chatty")
    enqueue_items(database, [with_payload({}), with_payload({})])
    drain(Worker(database, clock, heartbeat=False), clock)
    first, second = items(database)
    with database.begin() as conn:
        # Only the first is old enough: finished before the bound.
        conn.execute(
            update(queue_items)
            .where(queue_items.c.id == first.id)
            .values(finished_at=START - timedelta(days=30))
        )
        assert queue.prune(conn, START - timedelta(days=7))[0] == 1
    with database.read() as conn:
        assert attempts.rows_of(conn, first.id) == []
        assert [a.outcome for a in attempts.rows_of(conn, second.id)] == ["succeeded"]


def test_a_process_pool_childs_log_lines_come_back_with_its_answer(
    sqlite_database: Database, clock: FakeClock
) -> None:
    add_job(sqlite_database, target="python:worker_handlers:chatty", options={"max_attempts": 1})
    enqueue_items(sqlite_database, [with_payload({"fail": True}), with_payload({})])
    worker = Worker(sqlite_database, clock, pool="process", heartbeat=False)
    drain(worker, clock)
    runs = RunService(Context(sqlite_database, clock))
    outcomes = {}
    for row in items(sqlite_database):
        (attempt,) = runs.item_logs(TENANT, row.id).attempts
        assert attempt.output is not None
        (line,) = attempt.output["log"].splitlines()
        assert line.endswith(f"chatty {row.id} attempt 1 says hi")
        outcomes[attempt.outcome] = attempt.error
    assert outcomes.keys() == {"failed", "succeeded"} and outcomes["succeeded"] is None
    # (The pool's error text repeats the class name, "RuntimeError: RuntimeError: …",
    # as it did before output was kept.)
    assert (outcomes["failed"] or "").endswith("RuntimeError: chatty failed on attempt 1")
