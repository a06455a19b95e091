"""`cronplane dispatcher|worker --once`, `schedule run [--wait]`, `queue ls|info|cancel`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cronplane.cli.main import cli
from cronplane.store.database import Database
from firing_support import add_job, add_schedule, items


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    return database


def run(db: Database, *args: str) -> object:
    result = CliRunner().invoke(cli, ["--db", db.url, "--tenant", "acme", *args])
    return result


def test_dispatcher_once_then_worker_once(db: Database) -> None:
    add_job(db, target="python:worker_handlers:ok")
    add_schedule(db, next_run=db.now())
    result = run(db, "dispatcher", "--once")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "leader=True" in result.output and "fire=1" in result.output  # type: ignore[attr-defined]
    result = run(db, "worker", "--once")
    assert "ran one item" in result.output  # type: ignore[attr-defined]
    (item,) = items(db)
    assert item.status == "succeeded"


def test_dispatcher_lanes_must_be_positive(db: Database) -> None:
    add_job(db, target="python:worker_handlers:ok")
    add_schedule(db, next_run=db.now())
    result = run(db, "dispatcher", "--once", "--lanes", "0")
    assert result.exit_code == 2 and "--lanes" in result.output  # type: ignore[attr-defined]
    assert items(db) == []


@pytest.mark.postgres
def test_dispatcher_once_with_lanes_on_postgres(pg_database: Database) -> None:
    add_job(pg_database, target="python:worker_handlers:ok")
    add_schedule(pg_database, next_run=pg_database.now())
    result = run(pg_database, "dispatcher", "--once", "--lanes", "3")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert "fire=1" in result.output  # type: ignore[attr-defined]
    assert len(items(pg_database)) == 1


def test_schedule_run_wait_reports_failure(db: Database) -> None:
    add_job(db, target="python:worker_handlers:boom", options={"max_attempts": 1})
    add_schedule(db, "nightly")
    import threading

    from cronplane.clock import SystemClock
    from cronplane.processes.worker import Worker

    worker = Worker(db, SystemClock(), heartbeat=False, poll=0.05)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        result = run(db, "schedule", "run", "nightly", "--wait", "--timeout", "20")
    finally:
        worker.stop()
        thread.join(5)
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert "failed" in result.output and "boom" in result.output  # type: ignore[attr-defined]


def test_queue_ls_info_cancel(db: Database) -> None:
    add_job(db)
    add_schedule(db, "nightly")
    result = run(db, "schedule", "run", "nightly", "--json")
    item = json.loads(result.output)  # type: ignore[attr-defined]
    assert item["source"] == "manual" and item["priority"] == 5
    listed = json.loads(run(db, "queue", "ls", "--json").output)  # type: ignore[attr-defined]
    assert [i["id"] for i in listed] == [item["id"]]
    assert item["id"] in run(db, "queue", "info", item["id"]).output  # type: ignore[attr-defined]
    cancelled = json.loads(run(db, "queue", "cancel", item["id"], "--json").output)  # type: ignore[attr-defined]
    assert cancelled["status"] == "cancelled"
    again = run(db, "queue", "cancel", item["id"])
    assert again.exit_code != 0  # type: ignore[attr-defined]
