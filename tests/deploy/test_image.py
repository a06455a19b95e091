"""The container image (deploy/image): built from a Debian root fs made by mmdebstrap,
run with podman as `cronplane serve` against a SQLite volume and the host's PostgreSQL.

Each run checks `/readyz` and the image's HEALTHCHECK, a schedule firing once per
occurrence (the queue's items against the target's own record, a line per run in a
file on the volume), and a clean stop on SIGTERM: the item running when the signal
came finishes, nothing is left `running`, and the process exits 0.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from podman_support import container, free_port, image, inspect, podman, wait_for, wait_http
from sqlalchemy import create_engine, text

from cronplane import __version__

# Cold, the images take minutes to build (base, wheels, PostgreSQL, Prometheus).
pytestmark = [pytest.mark.deploy, pytest.mark.timeout(900)]

# The job: append the occurrence to a file on the volume, slowly enough that SIGTERM
# finds one running. `command:` targets are the ones a stock image can run.
LINE = 'sleep 2; echo "$CRONPLANE_SCHEDULED_FOR" >> /var/lib/cronplane/fired.log'


@dataclass
class Served:
    name: str
    url: str
    database_url: str  # as the host reaches it
    volume: Path  # the volume's directory on the host


def items(database_url: str) -> list[dict[str, Any]]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    # The test's job only: housekeeping (`system` schedules) fires too.
                    "SELECT status, scheduled_for, started_at, finished_at, result "
                    "FROM queue_items WHERE job = 'append' ORDER BY scheduled_for"
                )
            )
            return [dict(row._mapping) for row in rows]
    finally:
        engine.dispose()


def started(item: dict[str, Any]) -> bool:
    """Whether `item` is running and its target started. A claimed item is stored
    `running` too, with `started_at` its instant (in the future for a claim made ahead of
    it) until a slot starts it, and a slot does so within START_BOUND (0.25 s) of that
    instant or gives it back: one `running` since 0.5 s has started."""
    if item["status"] != "running":
        return False
    at = item["started_at"]
    at = datetime.fromisoformat(at) if isinstance(at, str) else at  # SQLite: text
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at  # stored as UTC
    return bool(at < datetime.now(UTC) - timedelta(seconds=0.5))


def lease_left_running(database_url: str) -> bool:
    """Whether the dispatcher's lease still had time left after the node stopped."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            expires, renewed = conn.execute(
                text("SELECT expires_at, renewed_at FROM leases WHERE name = 'dispatcher'")
            ).one()
    finally:
        engine.dispose()
    # A released lease expires when it was last renewed (store.lease.release); a held one
    # a TTL (3 s here) after.
    return bool(expires != renewed)


def volume(name: str) -> Iterator[Path]:
    podman("volume", "rm", "--force", name, check=False)
    podman("volume", "create", name)
    try:
        yield Path(podman("volume", "inspect", "--format", "{{.Mountpoint}}", name).stdout.strip())
    finally:
        podman("volume", "rm", "--force", name, check=False)


def serve(name: str, vol: str, database_url: str | None) -> Iterator[str]:
    port = free_port()
    env = ["--env", "CRONPLANE_ALLOW_COMMAND_TARGETS=1"]
    if database_url is not None:
        env += ["--env", f"CRONPLANE_DATABASE_URL={database_url}"]
    args = [
        "--network=host",  # loopback only: the host's PostgreSQL and the test reach it there
        "--volume", f"{vol}:/var/lib/cronplane",
        "--env", f"CRONPLANE_HEALTH_URL=http://127.0.0.1:{port}/readyz",
        *env,
        image(),
        "serve", "--host", "127.0.0.1", "--port", str(port), "--ttl", "3",
    ]  # fmt: skip
    with container(name, args):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def on_sqlite() -> Iterator[Served]:
    name = f"cronplane-image-sqlite-{os.getpid()}"
    for path in volume(name):
        for url in serve(name, name, None):
            yield Served(name, url, f"sqlite:///{path}/cronplane.db", path)


@pytest.fixture
def on_postgres(pg_admin_url: str) -> Iterator[Served]:
    import psycopg

    name = f"cronplane-image-pg-{os.getpid()}"
    db = name.replace("-", "_")
    admin = pg_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db}"')
    url = pg_admin_url.rsplit("/", 1)[0] + "/" + db
    try:
        for path in volume(name):
            for served in serve(name, name, url):
                yield Served(name, served, url, path)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def cli(served: Served, *args: str) -> str:
    return podman("exec", served.name, "cronplane", *args).stdout


def check_serve(served: Served) -> None:
    assert wait_http(f"{served.url}/readyz") == {
        "status": "ok",
        "checks": {"database": "ok", "migrations": "ok"},
    }
    assert podman("healthcheck", "run", served.name, check=False).returncode == 0

    cli(served, "job", "add", "append", "--target", f"command:{LINE}")
    cli(served, "schedule", "add", "every-second", "--job", "append", "--cron", "every 1 second")

    def settled() -> list[dict[str, Any]]:
        now = items(served.database_url)
        done = [i for i in now if i["status"] == "succeeded"]
        return done if len(done) >= 2 and any(map(started, now)) else []

    wait_for("two runs finished and a third started", settled, timeout=60)

    stopped = time.monotonic()
    podman("stop", "--time", "60", served.name, timeout=90)  # SIGTERM, SIGKILL after 60 s
    took = time.monotonic() - stopped
    state = inspect(served.name)["State"]
    assert state["ExitCode"] == 0, state
    assert took < 30, f"stop took {took:.1f} s"

    assert lease_left_running(served.database_url) is False  # released: expires_at <= stop
    after = items(served.database_url)
    assert [i for i in after if i["status"] == "running"] == []  # finished or given back
    assert {i["status"] for i in after} <= {"succeeded", "queued"}
    succeeded = [i for i in after if i["status"] == "succeeded"]
    assert len(succeeded) >= 3  # the one running at SIGTERM finished
    # Exactly once per occurrence: one line per succeeded item, each its own instant.
    lines = (served.volume / "fired.log").read_text().split()
    assert len(lines) == len(set(lines)) == len(succeeded)
    occurrences = sorted(i["scheduled_for"] for i in succeeded)
    assert len(set(occurrences)) == len(occurrences)
    results = [json.loads(r) if isinstance(r := i["result"], str) else r for i in succeeded]
    assert [r["exit_code"] for r in results] == [0] * len(succeeded)


def test_image_has_no_compiler_and_runs_as_a_user() -> None:
    tag = image()
    config = inspect(tag)["Config"]
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["/usr/bin/tini", "--", "cronplane"]
    assert inspect(tag)["Healthcheck"]["Test"][0] == "CMD"  # kept: built --format=docker
    probe = (
        "for c in gcc cc g++ c++ clang make; do command -v $c; done; id -un; cronplane --version"
    )
    out = podman("run", "--rm", "--entrypoint", "sh", tag, "-c", probe).stdout.split()
    # No compiler was found before the user's name; the installed wheel's version after it.
    assert out == ["cronplane", "cronplane,", "version", __version__]


def test_serve_on_a_sqlite_volume(on_sqlite: Served) -> None:
    check_serve(on_sqlite)


@pytest.mark.postgres
def test_serve_on_the_hosts_postgresql(on_postgres: Served) -> None:
    check_serve(on_postgres)
