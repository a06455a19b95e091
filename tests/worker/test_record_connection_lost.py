"""The database connection drops while a worker records what it ran (a Patroni switchover
or failover lands there; issue 40). The run happened: the worker keeps its outcome and
writes it at its next step, so the item is recorded once and never runs again. Before,
the outcome was dropped, the item stayed `running`, and once its lease lapsed the sweep
requeued it and it ran a second time.

The connection is terminated from the server (pg_terminate_backend) just as the success
UPDATE is about to run: a real dropped connection, PostgreSQL only.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from cronplane.clock import FakeClock
from cronplane.core.model import Scope
from cronplane.processes.worker import DEFAULT_LEASE, Worker
from cronplane.service.base import Context
from cronplane.service.housekeeping import expire
from cronplane.service.runs import RunService
from cronplane.store.database import Database
from cronplane.store.dialects.listener import plain_url
from firing_support import START, TENANT, add_job, add_schedule

SCOPE = Scope(TENANT, "default", "default")


class KillAtSuccess:
    """Terminates, from the server, the connection about to write a success (once)."""

    def __init__(self, database: Database) -> None:
        self.admin = psycopg.connect(plain_url(database), autocommit=True)
        self.lock = threading.Lock()
        self.kills = 0

    def __call__(self, conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        with self.lock:
            if self.kills or not statement.lstrip().startswith("UPDATE queue_items"):
                return
            if "succeeded" not in statement + repr(parameters):
                return
            self.kills += 1
            pid = cursor.connection.execute("SELECT pg_backend_pid()").fetchone()[0]
            # The second argument waits until the backend has exited.
            self.admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])


@pytest.mark.postgres
def test_an_outcome_whose_write_dropped_is_written_next_step(
    pg_database: Database, tmp_path: Path
) -> None:
    ran = tmp_path / "ran.txt"
    add_job(pg_database, target="python:control_handlers:touch", options={"max_attempts": 3})
    add_schedule(pg_database)
    clock = FakeClock(START)
    item = RunService(Context(pg_database, clock)).run_now(
        SCOPE, "every-minute", actor="cli", payload={"file": str(ran)}
    )
    worker = Worker(pg_database, clock, heartbeat=False)
    killer = KillAtSuccess(pg_database)
    event.listen(pg_database.engine, "before_cursor_execute", killer)
    try:
        with pytest.raises(OperationalError):
            worker.run_once()  # ran, then the write of its success lost its connection
    finally:
        event.remove(pg_database.engine, "before_cursor_execute", killer)
        killer.admin.close()
    assert killer.kills == 1 and ran.read_text() == "ran\n"
    worker.run_once()  # nothing new to claim; the kept outcome is written
    runs = RunService(Context(pg_database, clock))
    assert runs.get_item(TENANT, item.id).status == "succeeded"
    # Past the lease the sweep finds nothing abandoned: it never runs again.
    clock.advance(seconds=DEFAULT_LEASE + 60)
    expire(pg_database, clock)
    while worker.run_once():
        pass
    assert ran.read_text() == "ran\n"
    assert runs.get_item(TENANT, item.id).attempts == 1
    assert clock.now() > START + timedelta(seconds=DEFAULT_LEASE)
