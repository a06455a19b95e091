"""max_concurrency per job and the per-tenant limit, under several real workers at once.

Four workers, each with a thread pool and batched claims, drain a queue on
SQLite and PostgreSQL while a monitor counts the `running` rows of the
limited job (or tenant) in the database; the handler counts the runs in
flight as well. Neither count ever passes the limit, and both reach it (so
the test would see a claim that ignored it).
"""

from __future__ import annotations

import threading
from typing import Any

import control_handlers
import pytest
from sqlalchemy import func, select

from cronplane.clock import SystemClock
from cronplane.core.inputs import JobSpec
from cronplane.errors import InvalidRequest
from cronplane.processes.worker import Worker
from cronplane.service.jobs import checked_job
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from firing_support import add_job, enqueue_items, item_row


@pytest.fixture(autouse=True)
def _counts() -> None:
    control_handlers.RUNNING.clear()
    control_handlers.PEAK.clear()


def _drain(database: Database, *, tenant_limit: int | None, where: Any) -> int:
    """Run 4 workers until the queue is empty; the most `where` rows seen running at once."""
    clock = SystemClock()
    workers = [
        Worker(
            database,
            clock,
            name=f"w{n}",
            heartbeat=False,
            concurrency=3,
            claim_batch=4,
            tenant_limit=tenant_limit,
        )
        for n in range(4)
    ]
    done = threading.Event()
    peak = 0

    def monitor() -> None:
        nonlocal peak
        query = select(func.count()).where(queue_items.c.status == "running", where)
        while not done.is_set():
            with database.read() as conn:
                peak = max(peak, int(conn.execute(query).scalar_one()))

    def work(worker: Worker) -> None:
        idle = 0
        while idle < 3:  # a few empty claims in a row: the queue is drained
            idle = 0 if worker.run_once() else idle + 1
            if idle:
                threading.Event().wait(0.05)

    watcher = threading.Thread(target=monitor)
    watcher.start()
    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    done.set()
    watcher.join()
    for worker in workers:
        worker.close()
    return peak


def _statuses(database: Database) -> dict[str, int]:
    with database.read() as conn:
        rows = conn.execute(
            select(queue_items.c.status, func.count()).group_by(queue_items.c.status)
        )
        return {status: int(count) for status, count in rows}


def test_a_job_never_runs_more_than_its_max_concurrency(database: Database) -> None:
    add_job(database, "capped", target="python:control_handlers:counted")
    add_job(database, "free", target="python:control_handlers:counted")
    now = SystemClock().now()
    rows = [item_row("capped", now=now, max_concurrency=2) for _ in range(24)]
    rows += [item_row("free", now=now) for _ in range(12)]
    for row in rows:
        row["payload"] = {"seconds": 0.05}
    enqueue_items(database, rows)
    peak = _drain(database, tenant_limit=None, where=queue_items.c.job == "capped")
    assert _statuses(database) == {"succeeded": 36}
    assert peak <= 2
    assert control_handlers.PEAK["job:acme/capped"] == 2  # reached, never passed
    # The unlimited job ran wider than the cap at some point (it is not held back).
    assert control_handlers.PEAK["job:acme/free"] > 2


def test_a_tenant_never_runs_more_than_the_tenant_limit(database: Database) -> None:
    for name in ("a", "b"):
        add_job(database, name, target="python:control_handlers:counted")
    now = SystemClock().now()
    rows = [item_row(name, now=now) for name in ("a", "b") for _ in range(15)]
    for row in rows:
        row["payload"] = {"seconds": 0.05}
    enqueue_items(database, rows)
    peak = _drain(database, tenant_limit=3, where=queue_items.c.tenant == "acme")
    assert _statuses(database) == {"succeeded": 30}
    assert peak <= 3
    assert control_handlers.PEAK["tenant:acme"] == 3


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"timeout": 0}, "options.timeout"),
        ({"timeout": -5}, "options.timeout"),
        ({"timeout": "10"}, "options.timeout"),
        ({"max_concurrency": 0}, "options.max_concurrency"),
        ({"max_concurrency": True}, "options.max_concurrency"),
    ],
)
def test_bad_run_options_are_refused(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        checked_job(JobSpec(name="j", target="python:m:f", options=options))
    assert refused.value.code.text == "X400007REQINV"
    assert refused.value.detail["field"] == field
