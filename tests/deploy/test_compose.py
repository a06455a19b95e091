"""deploy/compose.yaml, run by podman-compose: PostgreSQL, two serve nodes, a worker and
Prometheus (images from deploy/image/build.sh, Debian packages only). A schedule firing
every second keeps firing exactly once per occurrence when the serve node holding the
dispatch lease is killed (SIGKILL): the queue has one item per occurrence, the job's own
record (a line per run, written by the worker) one line per item, and the other node
took the lease with a new term. Prometheus has loaded the shipped rules and scrapes both
nodes. Grafana's profile names an upstream image (not in Debian, cannot be pulled
here): it is checked, not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from podman_support import ROOT, free_port, image, podman, require_tools, tool, wait_for, wait_http

# Cold, the images take minutes to build (base, wheels, PostgreSQL, Prometheus).
pytestmark = [pytest.mark.deploy, pytest.mark.timeout(900)]

COMPOSE = ROOT / "deploy" / "compose.yaml"
LINE = 'echo "$CRONPLANE_SCHEDULED_FOR" >> /var/lib/cronplane/fired.log'


class Stack:
    def __init__(self, project: str, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.ports = {"serve-1": env["CRONPLANE_PORT_1"], "serve-2": env["CRONPLANE_PORT_2"]}

    def compose(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [tool("podman-compose"), "-p", self.project, "-f", str(COMPOSE), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"podman-compose {args}: {done.stdout}{done.stderr}"
        return done.stdout

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"

    def exec(self, service: str, *args: str) -> str:
        return podman("exec", self.container(service), *args).stdout

    def sql(self, query: str) -> list[str]:
        out = self.exec("postgres", "psql", "-At", "-d", "cronplane", "-c", query)
        return out.split()

    def leader(self, service: str) -> bool:
        url = f"http://127.0.0.1:{self.ports[service]}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                text = response.read().decode()
        except OSError:
            return False
        return "cronplane_leader 1.0" in text.splitlines()


@pytest.fixture
def stack() -> Iterator[Stack]:
    require_tools("podman", "podman-compose")
    for name in ("cronplane", "postgres", "prometheus"):
        image(name)  # tags :latest, which compose.yaml names
    env = dict(os.environ)
    env.update(
        CRONPLANE_PORT_1=str(free_port()),
        CRONPLANE_PORT_2=str(free_port()),
        PROMETHEUS_PORT=str(free_port()),
        CRONPLANE_ALLOW_COMMAND_TARGETS="1",
    )
    running = Stack(f"cronplane-compose-{os.getpid()}", env)
    started = time.monotonic()
    try:
        running.compose("up", "-d")
        for port in running.ports.values():
            wait_http(f"http://127.0.0.1:{port}/readyz", timeout=90)
        print(f"compose up, both nodes ready: {time.monotonic() - started:.1f} s")
        yield running
    finally:
        for service in ("serve-1", "serve-2", "worker"):
            logs = podman("logs", running.container(service), check=False)
            print(f"--- {service} ---\n{logs.stdout[-2000:]}{logs.stderr[-2000:]}")
        running.compose("down", "-v", "-t", "5")


def succeeded(stack: Stack) -> int:
    query = "SELECT count(*) FROM queue_items WHERE job = 'append' AND status = 'succeeded'"
    return int(stack.sql(query)[0])


def test_fires_exactly_once_with_the_leading_node_killed(stack: Stack) -> None:
    stack.exec("serve-1", "cronplane", "job", "add", "append", "--target", f"command:{LINE}")
    stack.exec(
        "serve-1", "cronplane", "schedule", "add", "tick", "--job", "append",
        "--cron", "every 1 second", "--overlap", "allow",
    )  # fmt: skip
    wait_for("3 runs", lambda: succeeded(stack) >= 3, timeout=60)
    leader = wait_for(
        "a leader", lambda: next((s for s in stack.ports if stack.leader(s)), None), timeout=30
    )
    survivor = "serve-2" if leader == "serve-1" else "serve-1"
    (term_before,) = stack.sql("SELECT term FROM leases WHERE name = 'dispatcher'")
    podman("kill", stack.container(leader))  # SIGKILL: no lease released
    killed_at = time.time()

    wait_for(f"{survivor} leads", lambda: stack.leader(survivor), timeout=30)
    later = (
        "SELECT count(*) FROM queue_items WHERE job = 'append' "
        f"AND scheduled_for > to_timestamp({killed_at})"
    )
    wait_for("5 fires after the kill", lambda: int(stack.sql(later)[0]) >= 5, timeout=60)
    stack.exec(survivor, "cronplane", "schedule", "disable", "tick")
    waiting = "SELECT count(*) FROM queue_items WHERE status IN ('queued', 'running')"
    wait_for("the queue drained", lambda: stack.sql(waiting) == ["0"], timeout=60)

    (term_after,) = stack.sql("SELECT term FROM leases WHERE name = 'dispatcher'")
    assert int(term_after) > int(term_before)  # taken over, not released
    statuses = stack.sql("SELECT DISTINCT status FROM queue_items WHERE job = 'append'")
    assert statuses == ["succeeded"]
    instants = [
        float(v)
        for v in stack.sql(
            "SELECT extract(epoch FROM scheduled_for) FROM queue_items WHERE job = 'append'"
        )
    ]
    assert len(instants) == len(set(instants)) >= 8  # one item per occurrence
    lines = stack.exec("worker", "cat", "/var/lib/cronplane/fired.log").split()
    ran = [datetime.fromisoformat(line).timestamp() for line in lines]
    assert len(ran) == len(set(ran))  # the job ran once per occurrence
    assert sorted(ran) == sorted(instants)
    gaps = [b - a for a, b in zip(sorted(instants), sorted(instants)[1:], strict=False)]
    print(f"{len(instants)} occurrences, largest gap {max(gaps):.0f} s (the takeover)")
    assert max(gaps) < 15  # the lease's TTL is 10 s (docs/operations.md)

    rules = wait_http(f"http://127.0.0.1:{stack.env['PROMETHEUS_PORT']}/api/v1/rules")
    assert [g["name"] for g in rules["data"]["groups"]] == ["cronplane"]
    targets = wait_http(f"http://127.0.0.1:{stack.env['PROMETHEUS_PORT']}/api/v1/targets")
    scraped = {t["labels"]["instance"] for t in targets["data"]["activeTargets"]}
    assert scraped == {"serve-1:8080", "serve-2:8080"}


def test_grafana_profile_provisions_the_shipped_dashboard() -> None:
    compose: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    grafana = compose["services"]["grafana"]
    assert grafana["profiles"] == ["grafana"]  # not started by a plain `up`
    mounts = {m.split(":")[1]: COMPOSE.parent / m.split(":")[0] for m in grafana["volumes"]}
    assert all(source.is_file() for source in mounts.values()), mounts
    dashboard = json.loads(mounts["/var/lib/grafana/dashboards/cronplane.json"].read_text())
    assert dashboard["uid"] and dashboard["panels"]
    providers = yaml.safe_load(
        mounts["/etc/grafana/provisioning/dashboards/cronplane.yaml"].read_text()
    )
    assert providers["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    sources = yaml.safe_load(
        mounts["/etc/grafana/provisioning/datasources/cronplane.yaml"].read_text()
    )
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    assert "prometheus" in compose["services"] and source["isDefault"] is True
    # podman-compose resolves the file with the profile on (interpolation, anchors).
    done = subprocess.run(
        [tool("podman-compose"), "-f", str(COMPOSE), "--profile", "grafana", "config"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "grafana/grafana-oss" in done.stdout


def test_every_cronplane_service_runs_a_command_cronplane_accepts() -> None:
    compose: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    cli = Path(sys.executable).with_name("cronplane")
    for name in ("serve-1", "serve-2", "worker"):
        service = compose["services"][name]
        assert service["image"] == "localhost/cronplane:latest"
        done = subprocess.run([str(cli), *service["command"], "--help"], capture_output=True)
        assert done.returncode == 0, name
