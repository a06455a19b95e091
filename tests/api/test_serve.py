"""`cronplane serve` as a real process: uvicorn on loopback with the dispatcher and a worker."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from cronplane.clock import SystemClock
from cronplane.core.inputs import JobSpec
from cronplane.service import ScheduleService
from cronplane.store.database import Database


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cronplane(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cronplane", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_serve_answers_the_api_and_dispatches(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'serve.db'}"
    env = {
        "CRONPLANE_DATABASE_URL": url,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        # The worker imports the handler module from here.
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    made = cronplane("token", "create", "--tenant", "acme", "--role", "admin", env=env)
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]
    database = Database(url)
    service = ScheduleService(database, SystemClock())
    service.register_job(
        "acme", "default", JobSpec(name="tick", target="python:serve_handlers:tick"), actor="t"
    )
    database.dispose()

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cronplane", "serve", "--port", str(port), "--workers", "1"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        deadline = time.monotonic() + 30  # a loaded machine starts a process slowly
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        assert httpx.get(base + "/readyz").status_code == 200
        created = httpx.post(
            base + "/api/v1/tenants/acme/schedules",
            json={"job": "tick", "cron": "* * * * *", "payload": {"obj": 1}},
            headers=headers,
        )
        assert created.status_code == 201, created.text
        run = httpx.post(
            base + "/api/v1/tenants/acme/schedules/default/default/tick/run",
            params={"wait": "true", "timeout": 20},
            headers=headers,
            timeout=30,
        )
        assert run.status_code == 202, run.text
        assert run.json()["status"] == "succeeded", run.json()
        assert run.json()["result"] == {"echo": {"obj": 1}}
        metrics = httpx.get(base + "/metrics").text
        assert "cronplane_http_requests_total" in metrics
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    # A stop on SIGTERM is a clean exit (what systemd, podman and Kubernetes send).
    assert server.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output


def test_serve_help_lists_the_api_options() -> None:
    done = cronplane("serve", "--help", env={})
    for flag in ("--host", "--port", "--no-dispatcher", "--no-worker"):
        assert flag in done.stdout
    assert "127.0.0.1" in done.stdout and "8080" in done.stdout
