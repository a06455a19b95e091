"""CRONPLANE_READ_URL (issue 40): the API's and console's listings and history read the
replica; a single row, a token, and every write go to the database. The "replica" here
is a second database with different rows, so where each answer came from shows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_support import Api, make_api, seed_tenant
from fastapi.testclient import TestClient
from test_serve import cronplane, free_port

from cronplane.api.app import create_app
from cronplane.clock import SystemClock
from cronplane.core.inputs import JobSpec
from cronplane.service import ScheduleService
from cronplane.store.database import Database

S = "/tenants/acme/schedules"


@pytest.fixture
def replica(tmp_path: Path) -> Iterator[Database]:
    """A second database: the same tenant, other rows."""
    database = Database(f"sqlite:///{tmp_path / 'replica.db'}")
    database.upgrade()
    service = ScheduleService(database, SystemClock())
    seed_tenant(service, "acme", prefix="replica")
    spec = JobSpec(name="only-on-replica", target="python:billing.jobs:report")
    service.register_job("acme", "billing", spec, actor="seed")
    yield database
    database.dispose()


def _with_replica(database: Database, replica: Database) -> Api:
    """make_api's app, rebuilt over the same database with `replica` for reads."""
    made = make_api(database)
    app = create_app(database, made.clock, replica=replica)
    made.app, made.service = app, app.state.cronplane.service
    made.tokens = made.service.tokens
    made.client = TestClient(app)
    return made


def _names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    body = response.json()
    rows = body["items"] if isinstance(body, dict) else body
    return sorted(row["name"] for row in rows)


def test_listings_and_history_come_from_the_replica(database: Database, replica: Database) -> None:
    api = _with_replica(database, replica)
    seed_tenant(api.service, "acme", prefix="primary")  # a write: on the database
    assert _names(api.call("GET", S)) == ["replica-nightly"]
    assert _names(api.call("GET", "/tenants/acme/jobs")) == ["only-on-replica", "report"]
    history = api.call("GET", S + "/billing/prod/replica-nightly/history")
    assert history.status_code == 200, history.text
    assert history.json()["items"], "the replica's row has its creation event"
    # One row by its key is not a listing: it is read where writes are made.
    assert api.call("GET", S + "/billing/prod/primary-nightly").status_code == 200
    assert api.call("GET", S + "/billing/prod/replica-nightly").status_code == 404
    # A write goes to the database, never to the replica; the listing stays the replica's.
    made = api.call(
        "POST", S, json={"job": "report", "cron": "@hourly", "name": "new", "stack": "billing"}
    )
    assert made.status_code == 201, made.text
    on_primary = ScheduleService(database, SystemClock()).list_schedules("acme").items
    assert sorted(row.name for row in on_primary) == ["new", "primary-nightly"]
    on_replica = ScheduleService(replica, SystemClock()).list_schedules("acme").items
    assert [row.name for row in on_replica] == ["replica-nightly"]
    assert _names(api.call("GET", S)) == ["replica-nightly"]


def test_a_replica_that_is_down_answers_503_and_writes_go_on(sqlite_database: Database) -> None:
    down = Database("postgresql+psycopg://postgres@127.0.0.1:1/replica?connect_timeout=2")
    api = _with_replica(sqlite_database, down)
    seed_tenant(api.service, "acme", prefix="primary")
    listed = api.call("GET", S)
    assert listed.status_code == 503, listed.text
    assert listed.json()["code"] == "X503001DBDOWN"
    assert api.call("GET", S + "/billing/prod/primary-nightly").status_code == 200
    down.dispose()


def test_without_a_replica_listings_read_the_database(api: Api) -> None:
    seed_tenant(api.service, "acme", prefix="primary")
    assert _names(api.call("GET", S)) == ["primary-nightly"]


def test_serve_reads_its_listings_from_the_read_url(tmp_path: Path, replica: Database) -> None:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    env = {"CRONPLANE_DATABASE_URL": url, "CRONPLANE_URL": "", "CRONPLANE_TOKEN": ""}
    made = cronplane("token", "create", "--tenant", "acme", "--role", "admin", env=env)
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]
    primary = Database(url)
    seed_tenant(ScheduleService(primary, SystemClock()), "acme", prefix="primary")
    primary.dispose()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cronplane", "serve", "--port", str(port), "--no-worker"],
        env={**os.environ, **env, "CRONPLANE_READ_URL": str(replica.url)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    headers = {"Authorization": f"Bearer {token}"}
    try:
        for _ in range(400):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        listed = httpx.get(f"http://127.0.0.1:{port}/api/v1{S}", headers=headers)
        assert _names(listed) == ["replica-nightly"]
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output
