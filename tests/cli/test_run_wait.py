"""`schedule run NAME --wait` through the installed command: the exit code is the
job's outcome, across retries and backoff, locally and against a server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_process import Cronplane, run_cronplane
from live_server import serving

from cronplane.clock import SystemClock
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database
from firing_support import add_job, add_schedule

# Two attempts one second apart: the wait must outlast the backoff between them.
RETRYING = {"max_attempts": 2, "retry_base": 1, "retry_cap": 1}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    yield database
    database.dispose()


@contextmanager
def working(database: Database) -> Iterator[None]:
    """A worker running items in this process while the command waits."""
    worker = Worker(database, SystemClock(), heartbeat=False, poll=0.05, jitter=lambda: 0.0)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        worker.stop()
        thread.join(10)


def test_wait_exits_1_after_the_last_retry_failed(db: Database, cronplane: Cronplane) -> None:
    add_job(db, target="python:worker_handlers:boom", options=RETRYING)
    add_schedule(db, "nightly")
    with working(db):
        out = cronplane("schedule", "run", "nightly", "--wait", "--timeout", "30", "--json")
    assert out.code == 1, out.stderr
    item = out.json()
    assert isinstance(item, dict)
    assert item["status"] == "failed" and item["attempts"] == 2
    assert "boom on attempt 2" in item["error"]


def test_wait_exits_0_on_success_and_8_when_the_timeout_passes(
    db: Database, cronplane: Cronplane
) -> None:
    add_job(db, target="python:worker_handlers:ok")
    add_schedule(db, "nightly")
    # No worker: the item stays queued, the wait gives up, and says so by its code.
    pending = cronplane("schedule", "run", "nightly", "--wait", "--timeout", "0.5")
    assert pending.code == 8, pending.stderr
    assert "queued" in pending.stdout and "still" in pending.stderr
    with working(db):
        done = cronplane("schedule", "run", "nightly", "--wait", "--timeout", "30")
    assert done.code == 0, done.stderr
    assert "succeeded" in done.stdout
    # Without --wait the command only enqueues: exit 0 whatever happens later.
    assert cronplane("schedule", "run", "nightly").code == 0


def test_wait_against_a_server_exits_1_after_retries(database: Database, tmp_path: Path) -> None:
    add_job(database, target="python:worker_handlers:boom", options=RETRYING)
    add_schedule(database, "nightly")
    token = TokenService(Context(database, SystemClock())).create(
        tenant="acme", role="admin", actor="t"
    )
    with serving(database) as url, working(database):
        out = run_cronplane(
            "schedule",
            "run",
            "nightly",
            "--wait",
            "--timeout",
            "30",
            env={
                "CRONPLANE_URL": url,
                "CRONPLANE_TOKEN": token.secret,
                "CRONPLANE_TENANT": "acme",
                # Unreachable: the remote path must not touch a database.
                "CRONPLANE_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none",
            },
            cwd=tmp_path,
        )
    assert out.code == 1, out.stderr
    assert "failed" in out.stdout and "boom on attempt 2" in out.stdout
