"""`cronplane queue logs ITEM` through the installed command, locally and against a
server (issue 39), and the route that serves it over HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_process import Cronplane, Outcome, run_cronplane
from live_server import serving

from cronplane.clock import FakeClock
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database
from firing_support import START, add_job, enqueue_items, item_row, items


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    yield database
    database.dispose()


def failed_twice(database: Database) -> Any:
    """A python item that logged a line and failed on each of its two attempts."""
    add_job(database, target="python:worker_handlers:chatty", options={"max_attempts": 2})
    enqueue_items(database, [item_row(now=START, max_attempts=2) | {"payload": {"fail": True}}])
    clock = FakeClock(START)
    worker = Worker(database, clock, name="w1", heartbeat=False, jitter=lambda: 0.0)
    try:
        while worker.run_once():
            clock.advance(3600)
    finally:
        worker.close()
    (row,) = items(database)
    assert row.status == "failed"
    return row


def test_logs_print_each_attempt_with_what_the_target_logged(
    db: Database, cronplane: Cronplane
) -> None:
    row = failed_twice(db)
    out = cronplane("queue", "logs", str(row.id))
    assert out.code == 0, out.stderr
    assert f"Item {row.id} default/job (default): failed, attempt 2 of 2" in out.stdout
    for number in (1, 2):
        assert f"chatty {row.id} attempt {number} says hi" in out.stdout
        assert f"error: RuntimeError: chatty failed on attempt {number}" in out.stdout
    assert "Attempt 1: retry (worker w1)" in out.stdout
    assert "Attempt 2: failed (worker w1)" in out.stdout
    assert "X200031ITMFAI" in out.stdout  # the ledger's last word on it
    document = cronplane("queue", "logs", str(row.id), "--json")
    assert document.code == 0, document.stderr
    found = document.json()
    assert isinstance(found, dict)
    assert found["item"]["id"] == str(row.id) and found["item"]["status"] == "failed"
    assert [a["outcome"] for a in found["attempts"]] == ["retry", "failed"]
    assert found["attempts"][1]["output"]["log"].endswith(f"chatty {row.id} attempt 2 says hi\n")


def test_an_unknown_or_malformed_item_is_a_coded_error(db: Database, cronplane: Cronplane) -> None:
    unknown = cronplane("queue", "logs", str(uuid.uuid4()))
    assert unknown.code == 3 and "X404904ITMNFD" in unknown.stderr, unknown
    malformed = cronplane("queue", "logs", "nope")
    assert malformed.code == 2 and "not a queue item id" in malformed.stderr, malformed


def remote(url: str, token: str, tmp_path: Path, *args: str) -> Outcome:
    env: dict[str, str | None] = {
        "CRONPLANE_URL": url,
        "CRONPLANE_TOKEN": token,
        "CRONPLANE_TENANT": "acme",
        # Unreachable: the remote path must not touch a database.
        "CRONPLANE_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none",
    }
    return run_cronplane(*args, env=env, cwd=tmp_path)


def test_logs_over_a_server_are_the_local_document(
    database: Database, cronplane: Cronplane, tmp_path: Path
) -> None:
    row = failed_twice(database)
    token = TokenService(Context(database, FakeClock(START))).create(
        tenant="acme", role="viewer", actor="t"
    )
    with serving(database) as url:
        out = remote(url, token.secret, tmp_path, "queue", "logs", str(row.id), "--json")
        text = remote(url, token.secret, tmp_path, "queue", "logs", str(row.id))
        unknown = remote(url, token.secret, tmp_path, "queue", "logs", str(uuid.uuid4()))
        answer = httpx.get(
            f"{url}/api/v1/tenants/acme/queue/items/{row.id}/logs",
            headers={"Authorization": f"Bearer {token.secret}"},
        )
        missing = httpx.get(
            f"{url}/api/v1/tenants/acme/queue/items/{uuid.uuid4()}/logs",
            headers={"Authorization": f"Bearer {token.secret}"},
        )
    assert out.code == 0, out.stderr
    document = out.json()
    assert isinstance(document, dict)
    assert [a["attempt"] for a in document["attempts"]] == [1, 2]
    assert f"chatty {row.id} attempt 1 says hi" in document["attempts"][0]["output"]["log"]
    assert text.code == 0 and "failed, attempt 2 of 2" in text.stdout, text.stderr
    assert unknown.code == 3 and "X404904ITMNFD" in unknown.stderr, unknown
    assert answer.status_code == 200
    # The route's document is the one the command printed (times aside: pydantic
    # writes `Z` where the command writes `+00:00`).
    served = answer.json()
    assert served["item"]["id"] == document["item"]["id"]
    assert [(a["outcome"], a["output"], a["error"]) for a in served["attempts"]] == [
        (a["outcome"], a["output"], a["error"]) for a in document["attempts"]
    ]
    assert [e["code"] for e in served["events"]] == [e["code"] for e in document["events"]]
    assert missing.status_code == 404 and missing.json()["code"] == "X404904ITMNFD"
