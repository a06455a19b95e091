"""A success that ran and printed nothing has no attempt row: its item's row holds it, and
`queue logs` reads it from there (core.attempts.held_by_item). What a reader gets is the
attempt as it ran: its number, its worker, the target's own start and end."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cronplane.clock import FakeClock
from cronplane.core.attempts import Attempt
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store import attempts
from cronplane.store.database import Database
from firing_support import START, TENANT, add_job, enqueue_items, item_row, items


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def run_all(
    database: Database, clock: FakeClock, target: str, *payloads: dict[str, object]
) -> None:
    add_job(database, target=target, options={"max_attempts": 2})
    enqueue_items(
        database, [item_row(now=START, max_attempts=2) | {"payload": p} for p in payloads]
    )
    worker = Worker(database, clock, name="w7", heartbeat=False, jitter=lambda: 0.0)
    try:
        while worker.run_once():
            clock.advance(3600)  # past a retry's backoff
    finally:
        worker.close()


def test_a_silent_success_is_read_from_its_item(database: Database, clock: FakeClock) -> None:
    run_all(database, clock, "python:worker_handlers:ok", {"n": 1})
    (row,) = items(database)
    assert row.status == "succeeded"
    with database.read() as conn:
        assert attempts.rows_of(conn, row.id) == []  # nothing written twice
    (attempt,) = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert row.started_at is not None and row.finished_at is not None
    assert attempt == Attempt(row.id, 1, "succeeded", "w7", row.started_at, row.finished_at)


def test_a_retry_keeps_its_row_and_the_success_after_it_is_the_items(
    database: Database, clock: FakeClock
) -> None:
    run_all(database, clock, "python:worker_handlers:flaky", {})
    (row,) = items(database)
    assert (row.status, row.attempts) == ("succeeded", 2)
    tried = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert [(a.attempt, a.outcome, a.worker) for a in tried] == [
        (1, "retry", "w7"),
        (2, "succeeded", "w7"),
    ]
    assert tried[0].error is not None and "flaky on attempt 1" in tried[0].error
    assert (tried[1].started_at, tried[1].finished_at) == (row.started_at, row.finished_at)
    assert tried[1].started_at is not None and tried[0].finished_at <= tried[1].started_at


def test_a_success_that_printed_keeps_its_row_and_is_read_once(
    database: Database, clock: FakeClock
) -> None:
    run_all(database, clock, "python:worker_handlers:chatty", {})
    (row,) = items(database)
    with database.read() as conn:
        (written,) = attempts.rows_of(conn, row.id)
    (read,) = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert read == written and written.output is not None


def test_a_success_row_written_before_the_rule_is_read_once(
    database: Database, clock: FakeClock
) -> None:
    run_all(database, clock, "python:worker_handlers:ok", {})
    (row,) = items(database)
    assert row.started_at is not None and row.finished_at is not None
    # As an older worker wrote it: the success's own row, beside the item's.
    old = Attempt(row.id, 1, "succeeded", "old-worker", row.started_at, row.finished_at)
    with database.begin() as conn:
        attempts.add(conn, [old])
    assert RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts == [old]


def test_an_item_that_did_not_succeed_gets_no_attempt_made_up(
    database: Database, clock: FakeClock
) -> None:
    run_all(database, clock, "python:worker_handlers:boom", {})
    (row,) = items(database)
    assert row.status == "failed"
    tried = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert [a.outcome for a in tried] == ["retry", "failed"]
    assert tried[1].finished_at - tried[0].finished_at >= timedelta(seconds=3600)
