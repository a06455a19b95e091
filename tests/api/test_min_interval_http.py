"""CRONPLANE_MIN_INTERVAL over HTTP (issue 16): the app refuses a create, an edit or a
sync that sets a cron faster than the installation's minimum (400 X400010INTMIN naming
it), and `cronplane serve` reads the setting from its environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from api_support import Api, make_api, seed_tenant
from fastapi.testclient import TestClient
from test_serve import cronplane, free_port

from cronplane.api.app import create_app
from cronplane.clock import SystemClock
from cronplane.service import ScheduleService
from cronplane.store.database import Database

S = "/tenants/acme/schedules"
ROW = S + "/billing/prod/acme-nightly"


def _strict_api(database: Database) -> Api:
    """make_api's app, rebuilt over the same database with a 10 s minimum."""
    made = make_api(database)
    app = create_app(database, made.clock, min_interval=10)
    made.app, made.service = app, app.state.cronplane.service
    made.tokens = made.service.tokens
    made.client = TestClient(app)
    return made


def _refused(response: httpx.Response, code: str = "X400010INTMIN") -> None:
    """400 with `code`; the minimum named (a sync lists it among its problems)."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == code, body
    assert "minimum interval on this installation is 10 seconds" in str(body)
    if code != "X400010INTMIN":
        assert "X400010INTMIN" in str(body["detail"]["problems"]), body


def test_create_edit_and_sync_below_the_minimum_are_refused(database: Database) -> None:
    api = _strict_api(database)
    seed_tenant(api.service, "acme")
    body = {"job": "report", "cron": "every 5 seconds", "name": "fast"}
    _refused(api.call("POST", S, json={**body, "stack": "billing", "environment": "prod"}))
    _refused(api.call("PATCH", ROW, json={"cron": "@every 1s"}))
    sync = {"stack": "billing", "crons": {"flush": {"cron": "every 2 seconds", "job": "report"}}}
    _refused(api.call("POST", "/tenants/acme/sync", json=sync), "X400006MANINV")
    listed = api.call("GET", S).json()["items"]
    assert [(row["name"], row["cron"]) for row in listed] == [("acme-nightly", "30 2 * * *")]
    ok = api.call("POST", S, json={**body, "cron": "every 10 seconds", "stack": "billing"})
    assert ok.status_code == 201 and ok.json()["cron"] == "@every 10s", ok.text


def test_the_default_app_allows_one_second(api: Api) -> None:
    seed_tenant(api.service, "acme")
    made = api.call("POST", S, json={"job": "report", "cron": "every 1 second", "stack": "billing"})
    assert made.status_code == 201 and made.json()["cron"] == "@every 1s", made.text


def test_serve_reads_the_minimum_from_its_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    env = {
        "CRONPLANE_DATABASE_URL": url,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        "CRONPLANE_MIN_INTERVAL": "10",
    }
    made = cronplane("token", "create", "--tenant", "acme", "--role", "admin", env=env)
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]
    database = Database(url)
    seed_tenant(ScheduleService(database, SystemClock()), "acme")
    database.dispose()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cronplane", "serve", "--port", str(port), "--no-worker"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/api/v1"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        schedule = {"job": "report", "stack": "billing", "name": "fast"}
        _refused(httpx.post(base + S, json={**schedule, "cron": "@every 5s"}, headers=headers))
        ok = httpx.post(base + S, json={**schedule, "cron": "every 10 seconds"}, headers=headers)
        assert ok.status_code == 201, ok.text
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode in (0, -signal.SIGTERM), output
