"""The worker's guarantees under batched claims, grouped outcomes and concurrency.

- a claim takes up to N items, highest priority then oldest, each once;
- outcomes of a batch are recorded together, each only while still ours;
  one failing item does not stop the others being recorded;
- retries (with backoff) and expiry behave as with one item per step;
- `concurrency` N runs N items at once (a barrier that fails when serialized);
- a worker process SIGKILLed mid-batch loses no item, and no item runs
  twice within one attempt (its unrecorded claims come back after the lease).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
import worker_handlers
from cli_process import command
from sqlalchemy import select, update

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.model import QueueItem
from cronplane.processes.worker import Worker
from cronplane.store import claims, outcomes, queue
from cronplane.store.database import Database
from cronplane.store.tables import events, queue_items
from firing_support import START, add_job, enqueue_items, item_row

LEASE = timedelta(seconds=60)
SCRIPT = Path(__file__).with_name("worker_process.py")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def all_items(database: Database) -> list[QueueItem]:
    with database.read() as conn:
        return queue.list_items(conn, tenant=None, limit=1000)


def event_codes(database: Database) -> Counter[str]:
    with database.read() as conn:
        return Counter(conn.execute(select(events.c.code)).scalars())


def test_a_batch_claim_takes_up_to_n_by_priority_each_once(
    database: Database, clock: FakeClock
) -> None:
    rows = [item_row(now=START, priority=p) for p in (0, 5, 1, 5, 0)]
    rows[4]["available_at"] = START + timedelta(seconds=1)  # not yet available
    enqueue_items(database, rows)
    with database.begin() as conn:
        first = claims.claim_batch(conn, "w", START, LEASE, 3)
    assert [i.priority for i in first] == [5, 5, 1]
    with database.begin() as conn:
        second = claims.claim_batch(conn, "w2", START, LEASE, 3)
        assert claims.claim_batch(conn, "w3", START, LEASE, 3) == []
    assert [i.id for i in second] == [rows[0]["id"]]
    for item in first + second:
        assert item.status == "running" and item.attempts == 1
        assert item.lease_expires_at == START + LEASE
    assert {i.lease_owner for i in first} == {"w"}


def test_grouped_outcomes_are_recorded_only_while_ours(
    database: Database, clock: FakeClock
) -> None:
    enqueue_items(database, [item_row(now=START, max_attempts=2) for _ in range(3)])
    with database.begin() as conn:
        claimed = claims.claim_batch(conn, "dead", START, LEASE, 3)
    later = START + LEASE
    with database.begin() as conn:
        assert queue.recover_abandoned(conn, later) == 3
        again = claims.claim_batch(conn, "alive", later, LEASE, 1)
        ids = [i.id for i in claimed]
        assert (
            outcomes.succeed_many(
                conn, [outcomes.Success(i, None, None, later) for i in ids], "dead", later
            )
            == set()
        )
        assert queue.heartbeat_many(conn, ids, "dead", later, LEASE) == set()
        assert queue.heartbeat_many(conn, ids, "alive", later, LEASE) == {again[0].id}
        done = outcomes.succeed_many(
            conn, [outcomes.Success(again[0].id, {"n": 1}, None, later)], "alive", later
        )
    assert done == {again[0].id}
    by_id = {i.id: i for i in all_items(database)}
    assert by_id[again[0].id].status == "succeeded" and by_id[again[0].id].result == {"n": 1}
    assert sorted(i.status for i in by_id.values()) == ["queued", "queued", "succeeded"]


def test_a_group_records_each_items_own_instants_in_one_write(
    database: Database, clock: FakeClock
) -> None:
    enqueue_items(database, [item_row(now=START) for _ in range(4)])
    with database.begin() as conn:
        a, b, c, d = claims.claim_batch(conn, "w", START, LEASE, 4)
        conn.execute(update(queue_items).where(queue_items.c.id == d.id).values(lease_owner="x"))
    now = START + timedelta(seconds=9)
    group = [
        outcomes.Success(a.id, None, START + timedelta(seconds=1), START + timedelta(seconds=2)),
        outcomes.Success(b.id, [1], None, START + timedelta(seconds=3)),  # the claim's start
        outcomes.Success(c.id, None, START + timedelta(microseconds=1), now),
        outcomes.Success(d.id, None, START, now),  # no longer ours
    ]
    with database.begin() as conn:
        assert outcomes.succeed_many(conn, group, "w", now) == {a.id, b.id, c.id}
    by_id = {i.id: i for i in all_items(database)}
    assert [(by_id[s.item_id].started_at, by_id[s.item_id].finished_at) for s in group[:3]] == [
        (START + timedelta(seconds=1), START + timedelta(seconds=2)),
        (START, START + timedelta(seconds=3)),
        (START + timedelta(microseconds=1), now),
    ]
    assert all(by_id[i].status == "succeeded" and by_id[i].updated_at == now for i in (a.id, c.id))
    assert by_id[b.id].result == [1] and by_id[b.id].lease_owner is None
    assert by_id[d.id].status == "running" and by_id[d.id].finished_at is None


def test_a_batch_with_one_failing_item_records_the_others(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, name="good", target="python:worker_handlers:ok")
    add_job(database, name="bad", target="python:worker_handlers:boom", options={"max_attempts": 2})
    rows = [item_row("good", now=START) for _ in range(3)] + [item_row("bad", now=START)]
    enqueue_items(database, rows)
    worker = Worker(database, clock, claim_batch=10, heartbeat=False, jitter=lambda: 0.0, pace=0.0)
    assert worker.run_once() is True
    assert worker.run_once() is False
    by_job = Counter((i.job, i.status) for i in all_items(database))
    assert by_job == {("good", "succeeded"): 3, ("bad", "queued"): 1}
    (bad,) = [i for i in all_items(database) if i.job == "bad"]
    assert bad.available_at > START and bad.error and "boom on attempt 1" in bad.error
    assert all(
        i.result == {"echo": {}, "attempt": 1} for i in all_items(database) if i.job == "good"
    )
    codes = event_codes(database)
    assert codes[ev.ITEM_SUCCEEDED.text] == 3 and codes[ev.ITEM_RETRY.text] == 1


def test_retries_and_expiry_are_unchanged_under_batches(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, name="bad", target="python:worker_handlers:boom", options={"max_attempts": 2})
    add_job(database, name="good", target="python:worker_handlers:ok")
    stale = item_row("good", now=START, expires_at=START + timedelta(seconds=5))
    enqueue_items(database, [item_row("bad", now=START), item_row("bad", now=START)])
    worker = Worker(database, clock, claim_batch=10, heartbeat=False, jitter=lambda: 0.0, pace=0.0)
    assert worker.run_once()
    assert {i.status for i in all_items(database)} == {"queued"}
    retry_at = min(i.available_at for i in all_items(database))
    enqueue_items(database, [stale])
    clock.set(retry_at - timedelta(seconds=1))  # the stale item has expired by then
    assert retry_at - START > timedelta(seconds=5)
    assert worker.run_once() is False  # backoff not over, and an expired item is not claimed
    clock.set(retry_at)
    assert worker.run_once()
    statuses = Counter((i.job, i.status, i.attempts) for i in all_items(database))
    assert statuses == {("bad", "failed", 2): 2, ("good", "queued", 0): 1}
    with database.begin() as conn:
        assert [i.id for i in queue.expire_stale(conn, clock.now())] == [stale["id"]]
    codes = event_codes(database)
    assert codes[ev.ITEM_RETRY.text] == 2 and codes[ev.ITEM_FAILED.text] == 2


def test_a_stopping_worker_gives_back_the_claims_it_did_not_start(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, target="python:worker_handlers:hook")
    enqueue_items(database, [item_row(now=START, max_attempts=1) for _ in range(3)])
    worker = Worker(database, clock, claim_batch=3, heartbeat=False, pace=0.0)
    worker_handlers.ON_RUN[:] = [worker.stop]
    try:
        assert worker.run_once()
    finally:
        worker_handlers.ON_RUN.clear()
    found = Counter((i.status, i.attempts, i.lease_owner) for i in all_items(database))
    assert found == {("succeeded", 1, None): 1, ("queued", 0, None): 2}
    # Given back whole: the next worker runs them, within their one attempt.
    assert Worker(database, clock, claim_batch=3, heartbeat=False, pace=0.0).run_once()
    assert {i.status for i in all_items(database)} == {"succeeded"}


def test_an_item_that_expires_while_waiting_in_its_batch_is_not_run(
    database: Database, clock: FakeClock
) -> None:
    add_job(database, target="python:worker_handlers:hook")
    first = item_row(now=START, priority=1)
    late = item_row(now=START, expires_at=START + timedelta(seconds=30))
    enqueue_items(database, [first, late])
    worker = Worker(database, clock, claim_batch=2, heartbeat=False, pace=0.0)
    worker_handlers.ON_RUN[:] = [lambda: clock.advance(31)]  # the first item takes 31 s
    try:
        assert worker.run_once()
    finally:
        worker_handlers.ON_RUN.clear()
    by_id = {i.id: i for i in all_items(database)}
    assert by_id[first["id"]].status == "succeeded"
    assert (by_id[late["id"]].status, by_id[late["id"]].attempts) == ("queued", 0)
    with database.begin() as conn:
        assert [i.id for i in queue.expire_stale(conn, clock.now())] == [late["id"]]


def test_concurrency_runs_n_items_at_once(database: Database, clock: FakeClock) -> None:
    n = worker_handlers.BARRIER_PARTIES
    worker_handlers.BARRIER.reset()
    add_job(database, target="python:worker_handlers:together")
    enqueue_items(database, [item_row(now=START) for _ in range(n)])
    worker = Worker(database, clock, concurrency=n, heartbeat=False)
    try:
        assert worker.run_once()
    finally:
        worker.close()
    found = all_items(database)
    assert [i.status for i in found] == ["succeeded"] * n, [i.error for i in found]
    assert sorted(i.result for i in found) == list(range(n))


def test_one_heartbeat_renews_every_claim_of_the_batch(
    database: Database, clock: FakeClock
) -> None:
    worker_handlers.HOLD.clear()
    add_job(database, target="python:worker_handlers:held")
    enqueue_items(database, [item_row(now=START) for _ in range(3)])
    # The run slots' start bound in real time (the heartbeat moves the fake
    # clock fast); the leases in the fake clock's.
    clock.monotonic = time.monotonic  # type: ignore[method-assign]
    worker = Worker(database, clock, lease=30, concurrency=3, claim_batch=3, pace=0.0)
    before = {t for t in threading.enumerate() if t.name == "cronplane-heartbeat"}
    step = threading.Thread(target=worker.run_once)
    step.start()
    try:
        deadline = time.monotonic() + 20
        while True:  # the first item runs (held); all three leases must move on
            leases = [i.lease_expires_at for i in all_items(database)]
            if all(lease is not None and lease > START + timedelta(seconds=30) for lease in leases):
                break
            assert time.monotonic() < deadline, f"leases not renewed: {leases}"
            time.sleep(0.05)
        beating = {t for t in threading.enumerate() if t.name == "cronplane-heartbeat"}
        assert len(beating - before) == 1  # one heartbeat thread for the three claims
    finally:
        worker_handlers.HOLD.set()
        step.join(20)
        worker.close()
    assert [i.status for i in all_items(database)] == ["succeeded"] * 3


def run_log(path: Path) -> list[tuple[str, int]]:
    if not path.exists():
        return []
    return [(line.split()[0], int(line.split()[1])) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(("batch", "hang_at"), [(10, 4), (4, 7)])
def test_a_worker_killed_mid_batch_loses_nothing_and_repeats_no_attempt(
    database: Database, tmp_path: Path, batch: int, hang_at: int
) -> None:
    add_job(database, target="python:worker_handlers:logged")
    now = database.now()
    rows = [item_row(now=now, max_attempts=3) for _ in range(10)]
    enqueue_items(database, rows)
    log = tmp_path / "runs.log"
    env = os.environ | {"CRONPLANE_TEST_RUNLOG": str(log), "CRONPLANE_TEST_HANG_AT": str(hang_at)}
    env["PYTHONPATH"] = os.pathsep.join([str(SCRIPT.parent), env.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, str(SCRIPT), database.url, "victim", str(batch)], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while len(run_log(log)) < hang_at:
            assert child.poll() is None and time.monotonic() < deadline, (
                "the worker did not get there"
            )
            time.sleep(0.05)
        time.sleep(1.0)  # let it record what it would before the hang (it must not run more)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    before = {i.id: i for i in all_items(database)}
    recorded = {i for i, item in before.items() if item.status == "succeeded"}
    assert len(recorded) >= (hang_at - 1) // batch * batch  # the batches done before the hang
    assert all(before[i].attempts == 1 for i in recorded)
    held = [i for i in before.values() if i.status == "running"]
    # Only the hung item is held: the claims behind it could not start within
    # the start bound and were given back (queued, their attempt undone).
    assert len(held) == 1 and {i.lease_owner for i in held} == {"victim"}
    given_back = [i for i in before.values() if i.status == "queued"]
    assert len(given_back) == 10 - len(recorded) - 1
    assert all(i.attempts == 0 and i.lease_owner is None for i in given_back)
    # Housekeeping recovers its claims once their lease lapsed; another worker runs them.
    clock = FakeClock(database.now() + timedelta(seconds=301))
    with database.begin() as conn:
        assert queue.recover_abandoned(conn, clock.now()) == len(held)
    survivor = Worker(database, clock, claim_batch=batch, heartbeat=False, pace=0.0)
    os.environ.pop("CRONPLANE_TEST_HANG_AT", None)
    os.environ["CRONPLANE_TEST_RUNLOG"] = str(log)
    try:
        while survivor.run_once():
            pass
    finally:
        os.environ.pop("CRONPLANE_TEST_RUNLOG")
    after = all_items(database)
    assert [i.status for i in after] == ["succeeded"] * 10  # no item lost
    runs = run_log(log)
    assert len(runs) == len(set(runs)), "an item ran twice within one attempt"
    assert {item for item, _ in runs} == {str(r["id"]) for r in rows}
    for item in after:
        assert (str(item.id), item.attempts) in runs  # what succeeded ran, in that attempt
    for item_id in recorded:  # recorded before the kill: never run again
        assert [a for i, a in runs if i == str(item_id)] == [1]
    assert event_codes(database)[ev.ITEM_SUCCEEDED.text] == 10


def cronplane(database: Database, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(SCRIPT.parent), *sys.path])}
    argv = [command(), "--db", database.url, "--tenant", "acme", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def test_cli_worker_once_runs_one_item_and_options_must_be_positive(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    add_job(database, target="python:worker_handlers:ok")
    enqueue_items(database, [item_row(now=database.now()) for _ in range(3)])
    for option in ("--concurrency", "--claim-batch"):
        refused = cronplane(database, "worker", "--once", option, "0")
        assert refused.returncode == 2 and option in refused.stderr, refused.stderr
    done = cronplane(database, "worker", "--once", "--claim-batch", "50")
    assert done.returncode == 0 and "ran one item" in done.stdout, done.stderr
    assert sorted(i.status for i in all_items(database)) == ["queued", "queued", "succeeded"]
