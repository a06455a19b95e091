"""A worker starts what it claims, and the record says when it really ran (issue 32).

- N sleeping items due at once on a worker with N slots all start together,
  through the installed `cronplane worker` (both pools, both databases), and
  each item's `started_at`/`finished_at` agrees with the target's own clock;
- slow items after short ones (a short pace learned) still start together;
- a claimed item behind a slow one is given back, not kept waiting;
- a cancel between claim and start: the target never runs, both pools;
- a thread-pool run past its timeout says it ran to its end, and when.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_process import command
from sqlalchemy import select

from allowed_modules import VALUE as ALLOWED_PYTHON_TARGETS
from cronplane import events as ev
from cronplane.clock import SystemClock
from cronplane.core.model import QueueItem
from cronplane.processes.worker import START_BOUND, Worker
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.tables import events
from firing_support import add_job, enqueue_items, item_row

HERE = Path(__file__).parent


def _items(database: Database) -> list[QueueItem]:
    with database.read() as conn:
        return queue.list_items(conn, tenant=None, limit=1000)


def _worker_process(url: str, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    env["CRONPLANE_PYTHON_TARGETS"] = ALLOWED_PYTHON_TARGETS
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [command(), "worker", "--db", url, *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _stop(process: subprocess.Popen[bytes]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate(timeout=10)
    return err.decode(errors="replace")


def _wait(done: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.mark.parametrize("pool", ["thread", "process"])
def test_n_items_due_at_once_start_together_and_the_record_matches_the_target(
    database: Database, tmp_path: Path, pool: str
) -> None:
    slots = 4
    runs = tmp_path / "runs"
    runs.mkdir()
    add_job(database, target="python:control_handlers:clocked")
    worker = _worker_process(database.url, "--concurrency", str(slots), "--pool", pool)
    try:
        time.sleep(1.5 if pool == "thread" else 4.0)  # idle, polling (its children started)
        now = database.now()
        rows = [item_row(now=now) for _ in range(slots)]
        for row in rows:
            row["payload"] = {"dir": str(runs), "seconds": 1.5}
        enqueue_items(database, rows)
        _wait(lambda: len(list(runs.iterdir())) == slots)
        _wait(lambda: all(i.status == "succeeded" for i in _items(database)), timeout=30)
    finally:
        err = _stop(worker)
    found = {str(i.id): i for i in _items(database)}
    seen = {}
    for path in runs.iterdir():
        started, ended = (float(x) for x in path.read_text().split())
        seen[path.name] = (started, ended)
    assert set(seen) == set(found), err
    starts = [s for s, _ in seen.values()]
    assert max(starts) - min(starts) <= 0.2, ("did not start together", starts)
    for item_id, (started, ended) in seen.items():
        item = found[item_id]
        assert item.started_at is not None and item.finished_at is not None
        # The record agrees with the target's own clock, item by item.
        assert abs(item.started_at.timestamp() - started) <= 0.05, (item.started_at, started)
        assert abs(item.finished_at.timestamp() - ended) <= 0.05, (item.finished_at, ended)


def test_slow_items_after_short_ones_still_start_together(
    database: Database, tmp_path: Path
) -> None:
    """Short items teach the worker a short pace (a claim then starts one slot); slow
    items claimed next must not queue behind each other: every free slot takes one."""
    slots = 4
    warm, runs = tmp_path / "warm", tmp_path / "runs"
    warm.mkdir()
    runs.mkdir()
    add_job(database, target="python:control_handlers:clocked")
    worker = _worker_process(database.url, "--concurrency", str(slots))
    try:
        time.sleep(1.5)
        short = [item_row(now=database.now()) for _ in range(300)]
        for row in short:
            row["payload"] = {"dir": str(warm), "seconds": 0}
        enqueue_items(database, short)
        _wait(lambda: len(list(warm.iterdir())) == len(short))
        slow = [item_row(now=database.now()) for _ in range(slots)]
        for row in slow:
            row["payload"] = {"dir": str(runs), "seconds": 1.5}
        enqueue_items(database, slow)
        _wait(lambda: len(list(runs.iterdir())) == slots)
    finally:
        err = _stop(worker)
    starts = [float(path.read_text().split()[0]) for path in runs.iterdir()]
    assert len(starts) == slots, err
    assert max(starts) - min(starts) <= 0.2, ("did not start together", starts)


def test_a_claim_that_cannot_start_goes_back_for_another_worker(
    database: Database, tmp_path: Path
) -> None:
    # One slot, short items known: a claim takes several; the first hangs, so the
    # others cannot start within the bound and are given back, and a second
    # worker runs them while the first is still busy.
    add_job(database, "slow", target="python:control_handlers:clocked")
    add_job(database, "quick", target="python:control_handlers:touch")
    now = database.now()
    slow = item_row("slow", now=now, priority=9)
    slow["payload"] = {"dir": str(tmp_path), "seconds": 3}
    quick = [item_row("quick", now=now) for _ in range(3)]
    for row in quick:
        row["payload"] = {"file": str(tmp_path / "quick.log")}
    enqueue_items(database, [slow, *quick])
    first = Worker(database, SystemClock(), name="first", claim_batch=8, pace=0.0)
    busy = threading.Thread(target=first.run_once)
    busy.start()
    try:
        _wait(lambda: any(i.status == "running" for i in _items(database)), timeout=10)
        seen = time.monotonic()
        time.sleep(START_BOUND)
        # Given back soon after the bound; on a loaded machine the give-back's own write
        # may wait for SQLite's lock a little, so poll (well inside the slow item's 3 s).
        _wait(
            lambda: {i.status for i in _items(database) if i.job == "quick"} == {"queued"},
            timeout=2.0,
        )
        back_after = time.monotonic() - seen
        states = {i.id: i for i in _items(database) if i.job == "quick"}
        assert busy.is_alive() and back_after < 2.5, back_after  # while the first is busy
        assert all(i.attempts == 0 and i.lease_owner is None for i in states.values())
        second = Worker(database, SystemClock(), name="second", claim_batch=8, pace=0.0)
        while second.run_once():
            pass
        second.close()
        assert busy.is_alive()  # the first is still on its slow item
        assert (tmp_path / "quick.log").read_text().count("ran") == 3
    finally:
        busy.join(30)
        first.close()
    assert {i.status for i in _items(database)} == {"succeeded"}
    assert {i.lease_owner for i in _items(database)} == {None}


@pytest.mark.parametrize("pool", ["thread", "process"])
def test_a_cancel_between_claim_and_start_means_it_never_starts(
    database: Database, tmp_path: Path, pool: str
) -> None:
    add_job(database, "first", target="python:control_handlers:cancel_then_wait")
    add_job(database, "second", target="python:control_handlers:touch")
    add_job(database, "warm", target="python:control_handlers:warm")
    # One slot, short items known: both are claimed at once, the victim behind.
    worker = Worker(database, SystemClock(), name="w", claim_batch=8, pace=0.0, pool=pool)
    enqueue_items(database, [item_row("warm", now=database.now())])
    assert worker.run_once()  # a process pool's child has its imports from now on
    now = database.now()
    victim = item_row("second", now=now, priority=1)
    victim["payload"] = {"file": str(tmp_path / "ran")}
    canceller = item_row("first", now=now, priority=9)
    canceller["payload"] = {"url": database.url, "other": str(victim["id"]), "seconds": 0.05}
    enqueue_items(database, [victim, canceller])
    try:
        assert worker.run_once()
    finally:
        worker.close()
    assert not (tmp_path / "ran").exists()  # nothing of the target ran
    with database.read() as conn:
        after = queue.get(conn, victim["id"])
        codes = list(
            conn.execute(
                select(events.c.code, events.c.actor, events.c.detail)
                .where(events.c.item_id == victim["id"])
                .order_by(events.c.id)
            )
        )
    assert after is not None and after.status == "cancelled" and after.cancelled_by == "cli:ops"
    assert after.started_at is None and after.finished_at is not None
    if codes[-1].detail.get("was") == "queued":
        # The canceller slower than the start bound (a loaded machine; a process pool's
        # child): the victim went back to the queue before the cancel, cancelled there.
        assert [(c.code, c.actor) for c in codes] == [(ev.ITEM_CANCELLED.text, "cli:ops")]
        return
    assert after.error == "cancelled before it started, by cli:ops"
    assert [(c.code, c.actor) for c in codes] == [
        (ev.ITEM_CANCEL_REQUESTED.text, "cli:ops"),
        (ev.ITEM_CANCELLED.text, "worker:w"),
    ]
    assert codes[1].detail == {"cancelled_by": "cli:ops", "was": "claimed"}


def test_a_thread_run_past_its_timeout_says_it_ran_to_its_end(
    database: Database, tmp_path: Path
) -> None:
    add_job(database, target="python:control_handlers:clocked", options={"max_attempts": 1})
    row = item_row(now=database.now(), timeout=0.3)
    row["payload"] = {"dir": str(tmp_path), "seconds": 1.0}
    enqueue_items(database, [row])
    worker = Worker(database, SystemClock(), name="w", heartbeat=False)
    try:
        assert worker.run_once()
    finally:
        worker.close()
    _, ended = (float(x) for x in (tmp_path / str(row["id"])).read_text().split())
    (item,) = _items(database)
    assert item.status == "failed" and item.finished_at is not None
    assert abs(item.finished_at.timestamp() - ended) <= 0.05  # when it really ended
    end = datetime.fromtimestamp(ended, UTC)
    assert item.error is not None and "was stopped" not in item.error
    assert f"timed out after 0.3s; ran to its end at {end:%H:%M:%S} UTC" in item.error
