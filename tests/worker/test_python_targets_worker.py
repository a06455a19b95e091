"""A `python:` target outside CRONPLANE_PYTHON_TARGETS is refused by the worker process too.

Jobs stored before the rule (inserted directly) are run by a real `cronplane worker --once`
in both pools, allowed only `pydeny_handlers`: a target in another module, or one whose
attribute path walks into another module, fails with X403252PYDENY and is never called
(its file stays absent); the module's own function runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_process import command

from cronplane.core.model import QueueItem
from cronplane.store import queue
from cronplane.store.database import Database
from firing_support import add_job, enqueue_items, item_row

HERE = Path(__file__).parent

REFUSED = [
    "python:control_handlers:touch",  # a module not allowed
    "python:pydeny_handlers:control_handlers.touch",  # the walk passes through one
    "python:pydeny_handlers:borrowed_touch",  # defined in one, imported under a local name
]


def _run_worker_once(url: str, pool: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    env["CRONPLANE_PYTHON_TARGETS"] = "pydeny_handlers"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [command(), "worker", "--db", url, "--once", "--pool", pool],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _only_item(database: Database) -> QueueItem:
    with database.read() as conn:
        [item] = queue.list_items(conn, tenant=None, limit=10)
    return item


def _enqueue(database: Database, target: str, file: Path) -> None:
    add_job(database, target=target)
    row = item_row(now=database.now())
    row["payload"] = {"file": str(file)}
    enqueue_items(database, [row])


@pytest.mark.parametrize("pool", ["thread", "process"])
@pytest.mark.parametrize("target", REFUSED)
def test_the_worker_refuses_a_target_outside_the_allowed_modules(
    sqlite_database: Database, tmp_path: Path, pool: str, target: str
) -> None:
    proof = tmp_path / "ran.txt"
    _enqueue(sqlite_database, target, proof)
    done = _run_worker_once(sqlite_database.url, pool)
    assert done.returncode == 0, done.stderr
    item = _only_item(sqlite_database)
    assert item.status == "failed", (item, done.stderr)
    assert item.error is not None and item.error.startswith("X403252PYDENY"), item.error
    assert "CRONPLANE_PYTHON_TARGETS" in item.error
    assert item.attempts == 1  # refused for good: not retried
    assert not proof.exists()  # the target was never called


@pytest.mark.parametrize("pool", ["thread", "process"])
def test_the_worker_runs_a_function_of_an_allowed_module(
    sqlite_database: Database, tmp_path: Path, pool: str
) -> None:
    proof = tmp_path / "ran.txt"
    _enqueue(sqlite_database, "python:pydeny_handlers:own_touch", proof)
    done = _run_worker_once(sqlite_database.url, pool)
    assert done.returncode == 0, done.stderr
    assert _only_item(sqlite_database).status == "succeeded", done.stderr
    assert proof.read_text() == "ran\n"
