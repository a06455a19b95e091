"""Timeouts and cancellation of running items: real child processes really killed.

With `pool="process"` a python target runs in a child process; at its
timeout, or when its item is cancelled, the child (and its process group)
is killed: the test sees its pid gone and its side effect (a file it appends
to) stop growing. In thread mode the run cannot be stopped; the item is
still recorded timed out or cancelled once it returns.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import SystemClock
from cronplane.core.model import QueueItem
from cronplane.errors import ItemFinished
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store import claims, queue
from cronplane.store.database import Database
from cronplane.store.tables import events
from firing_support import add_job, enqueue_items, item_row


def _files(tmp_path: Path) -> dict[str, Any]:
    return {"pid_file": str(tmp_path / "pid"), "tick_file": str(tmp_path / "ticks")}


def _enqueue(database: Database, payload: dict[str, Any], **values: Any) -> QueueItem:
    row = item_row(now=SystemClock().now(), **values)
    row["payload"] = payload
    enqueue_items(database, [row])
    with database.read() as conn:
        found = queue.get(conn, row["id"])
    assert found is not None
    return found


def _item(database: Database, item: QueueItem) -> QueueItem:
    with database.read() as conn:
        found = queue.get(conn, item.id)
    assert found is not None
    return found


def _events(database: Database, item: QueueItem) -> list[Any]:
    with database.read() as conn:
        return list(
            conn.execute(select(events).where(events.c.item_id == item.id).order_by(events.c.id))
        )


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _wait_for(path: Path, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _ticks_stopped(path: Path) -> bool:
    before = path.read_text().count("t")
    time.sleep(0.4)  # eight tick periods of the target
    return path.read_text().count("t") == before


def test_process_pool_kills_a_run_at_its_timeout(database: Database, tmp_path: Path) -> None:
    add_job(database, target="python:control_handlers:ticking", options={"max_attempts": 2})
    item = _enqueue(database, _files(tmp_path), timeout=1, max_attempts=2)
    worker = Worker(database, SystemClock(), name="w", pool="process", heartbeat=False)
    try:
        started = time.monotonic()
        assert worker.run_once()
        elapsed = time.monotonic() - started
        pid = int(Path(tmp_path / "pid").read_text())
        assert _gone(pid), "the child that ran past its timeout still exists"
        assert _ticks_stopped(tmp_path / "ticks")
        assert elapsed < 20  # stopped at ~1 s (+ the child's start), not after 60 s
        after = _item(database, item)
        # A timeout uses an attempt: retried while attempts remain.
        assert (after.status, after.attempts) == ("queued", 1)
        assert after.error is not None and after.error.startswith("X408203RUNTMO")
        logged = _events(database, item)
        assert [e.code for e in logged] == [ev.ITEM_TIMED_OUT.text]
        assert logged[0].detail["timeout"] == 1 and "retry_at" in logged[0].detail
    finally:
        worker.close()


def test_a_timeout_on_the_last_attempt_fails_the_item(database: Database, tmp_path: Path) -> None:
    add_job(database, target="python:control_handlers:ticking", options={"max_attempts": 1})
    item = _enqueue(database, _files(tmp_path), timeout=1, max_attempts=1)
    worker = Worker(database, SystemClock(), name="w", pool="process", heartbeat=False)
    try:
        assert worker.run_once()
    finally:
        worker.close()
    after = _item(database, item)
    assert after.status == "failed" and after.error is not None
    assert after.error.startswith("X408203RUNTMO")
    assert [e.code for e in _events(database, item)] == [ev.ITEM_TIMED_OUT.text]


def test_process_pool_reuses_its_child_between_items(database: Database, tmp_path: Path) -> None:
    add_job(database, target="python:worker_handlers:ok")
    first = _enqueue(database, {"n": 1})
    second = _enqueue(database, {"n": 2})
    worker = Worker(database, SystemClock(), name="w", pool="process", heartbeat=False)
    try:
        assert worker.run_once()
        assert worker.processes is not None
        pids = worker.processes.pids()
        assert worker.run_once()
        assert worker.processes.pids() == pids and len(pids) == 1
    finally:
        worker.close()
    assert _item(database, first).result == {"echo": {"n": 1}, "attempt": 1}
    assert _item(database, second).status == "succeeded"
    assert all(_gone(pid) for pid in pids)  # closing ends the children


def test_thread_mode_records_a_timeout_once_the_run_returns(
    database: Database, tmp_path: Path
) -> None:
    add_job(database, target="python:control_handlers:ticking", options={"max_attempts": 1})
    payload = {**_files(tmp_path), "seconds": 1.5}
    item = _enqueue(database, payload, timeout=1, max_attempts=1)
    worker = Worker(database, SystemClock(), name="w", heartbeat=False)
    assert worker.run_once()
    after = _item(database, item)
    # The thread ran to its end (it cannot be stopped), then the item timed out.
    assert after.status == "failed" and after.error is not None
    assert after.error.startswith("X408203RUNTMO") and after.result is None
    assert "timed out after 1s; ran to its end at " in after.error and "stopped" not in after.error


def _run_in_background(worker: Worker) -> threading.Thread:
    thread = threading.Thread(target=worker.run_once, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("pool", ["process", "thread"])
def test_cancelling_a_running_item_stops_it(database: Database, tmp_path: Path, pool: str) -> None:
    add_job(database, target="python:control_handlers:ticking")
    seconds = 60 if pool == "process" else 1.5
    item = _enqueue(database, {**_files(tmp_path), "seconds": seconds})
    clock = SystemClock()
    worker = Worker(database, clock, name="w", pool=pool, watch=0.1)
    runs = RunService(Context(database, clock))
    try:
        thread = _run_in_background(worker)
        pid = int(_wait_for(tmp_path / "pid"))
        asked = runs.cancel_item("acme", item.id, actor="cli:ops")
        assert asked.status == "running"
        assert asked.cancel_requested_at is not None and asked.cancelled_by == "cli:ops"
        # Asking again changes nothing (the first actor stands).
        again = runs.cancel_item("acme", item.id, actor="cli:other")
        assert (again.status, again.cancelled_by) == ("running", "cli:ops")
        thread.join(timeout=30)
        assert not thread.is_alive()
    finally:
        worker.close()
    after = _item(database, item)
    assert after.status == "cancelled" and after.finished_at is not None
    assert after.error is not None
    assert after.error.startswith("cancelled while running, by cli:ops")
    if pool == "thread":  # a thread cannot be stopped: the record says when it ended
        assert f"ran to its end at {after.finished_at:%H:%M:%S} UTC" in after.error
    logged = _events(database, item)
    assert [(e.code, e.actor) for e in logged] == [
        (ev.ITEM_CANCEL_REQUESTED.text, "cli:ops"),
        (ev.ITEM_CANCELLED.text, "worker:w"),
    ]
    assert logged[1].detail["cancelled_by"] == "cli:ops"
    if pool == "process":
        assert _gone(pid) and _ticks_stopped(tmp_path / "ticks")
    with pytest.raises(ItemFinished):
        runs.cancel_item("acme", item.id, actor="cli:ops")
    assert _item(database, item) == after  # refused: nothing changed


def test_a_cancel_request_beats_a_retry(database: Database) -> None:
    # A run that fails after its stop was asked for is cancelled, not retried.
    add_job(database, target="python:worker_handlers:boom")
    item = _enqueue(database, {})
    clock = SystemClock()
    worker = Worker(database, clock, name="w", heartbeat=False)
    with database.begin() as conn:
        (claimed,) = claims.claim_batch(conn, "w", clock.now(), worker.lease, 1)
    RunService(Context(database, clock)).cancel_item("acme", item.id, actor="cli:ops")
    with database.read() as conn:
        (work,) = worker.claimer._lookups(conn, [claimed])
    worker._record([worker.runner.run(work, threading.Event(), worker.now)])
    assert _item(database, item).status == "cancelled"


def test_the_sweep_cancels_an_item_whose_worker_died_after_the_request(
    database: Database,
) -> None:
    add_job(database, target="python:worker_handlers:ok")
    item = _enqueue(database, {})
    clock = SystemClock()
    with database.begin() as conn:
        claims.claim_batch(conn, "dead-worker", clock.now(), timedelta(seconds=1), 1)
    RunService(Context(database, clock)).cancel_item("acme", item.id, actor="cli:ops")
    with database.begin() as conn:
        assert queue.recover_abandoned(conn, clock.now() + timedelta(seconds=5)) == 1
    after = _item(database, item)
    assert (after.status, after.cancelled_by) == ("cancelled", "cli:ops")  # not run again
