"""The UI tests' world: a real uvicorn serving the API and UI, a worker, seeded tenants.

`serving(path)` migrates a SQLite file, seeds tenant `demo` (jobs in two
stacks, schedules created at different past instants so Last Run differs,
one app row from a manifest), makes a token per role, and serves
`create_app(..., ui=True)` on 127.0.0.1 with an ephemeral port in a thread,
beside a Node running one worker so Run completes.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn

from cronplane.api.app import create_app
from cronplane.clock import FakeClock, SystemClock
from cronplane.core.access import Role
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.manifest import parse_manifest
from cronplane.processes.node import Node, NodeOptions
from cronplane.service import ScheduleService
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

TENANT = "demo"
MANIFEST = """
name: shop
jobs:
  pack-orders:
    title: Pack paid orders
    target: python:ui_handlers:report
    payload: {kind: packing}
crons:
  pack-orders: "*/30 * * * *"
"""


@dataclass(frozen=True)
class World:
    """What the tests reach: the base URL, the database and a token per role."""

    url: str
    database: Database
    tokens: dict[Role, str]


def seed(database: Database, now: datetime) -> None:
    """Jobs and schedules of tenant `demo`, created over the last days."""
    clock = FakeClock(now - timedelta(days=6))
    service = ScheduleService(database, clock)
    schema = {
        "type": "object",
        "properties": {"batch": {"type": "integer", "minimum": 1}, "dry_run": {"type": "boolean"}},
        "required": ["batch"],
        "additionalProperties": False,
    }
    jobs = [
        (
            "billing",
            "send-invoices",
            "Submit pending e-invoices",
            "python:ui_handlers:invoices",
            {"batch": 100},
            schema,
        ),
        (
            "billing",
            "build-report",
            "Build the daily report",
            "python:ui_handlers:report",
            {"kind": "daily"},
            None,
        ),
        (
            "billing",
            "sync-ledger",
            "Sync the general ledger",
            "python:ui_handlers:broken",
            {},
            None,
        ),
        (
            "stock",
            "replenish",
            "Replenishment run",
            "python:ui_handlers:report",
            {"kind": "stock"},
            None,
        ),
        (
            "stock",
            "notify-buyers",
            "Push buyer notifications",
            "python:ui_handlers:report",
            {},
            None,
        ),
    ]
    for stack, name, title, target, payload, payload_schema in jobs:
        spec = JobSpec(
            name=name, target=target, title=title, payload=payload, payload_schema=payload_schema
        )
        service.register_job(TENANT, stack, spec, actor="seed")
    service.register_job(
        TENANT,
        "stock",
        JobSpec(
            name="legacy-export",
            target="python:ui_handlers:report",
            title="Old CSV export",
            status="inactive",
        ),
        actor="seed",
    )
    schedules = [
        (
            "billing",
            "prod",
            ScheduleSpec(job="send-invoices", cron="*/15 * * * *", name="invoices-sweep"),
        ),
        (
            "billing",
            "prod",
            ScheduleSpec(
                job="build-report", cron="at 02:30", name="nightly-report", timezone="Europe/London"
            ),
        ),
        (
            "billing",
            "prod",
            ScheduleSpec(job="sync-ledger", cron="0 */6 * * *", name="ledger-sync"),
        ),
        (
            "stock",
            "prod",
            ScheduleSpec(
                job="replenish",
                cron="0 6 * * 1-5",
                name="replenish-weekdays",
                timezone="Asia/Kuala_Lumpur",
            ),
        ),
        (
            "stock",
            "staging",
            ScheduleSpec(
                job="notify-buyers", cron="0 9 1 * *", name="monthly-notice", enabled=False
            ),
        ),
    ]
    for stack, environment, spec in schedules:
        clock.advance(hours=19)
        service.create_schedule(Scope(TENANT, stack, environment), spec, actor="seed")
    clock.advance(hours=7)
    service.install_app(TENANT, "prod", parse_manifest(MANIFEST), actor="seed")
    # Runs recorded at different past instants (Last Run differs row by row);
    # recorded "now", so every Next Run is computed forward from now.
    clock.set(now)
    last_runs = {
        "invoices-sweep": 0.2,
        "nightly-report": 10,
        "ledger-sync": 3.5,
        "replenish-weekdays": 26,
        "pack-orders": 0.4,
    }
    for row in service.list_schedules(TENANT).items:
        if row.name in last_runs:
            ran = now - timedelta(hours=last_runs[row.name])
            service.record_run(row.scope, row.name, actor="seed", at=ran)


@contextmanager
def serving(path: Path) -> Iterator[World]:
    """Serve the API + UI over a fresh SQLite file, with a worker; stop everything after."""
    database = Database(f"sqlite:///{path}")
    database.upgrade()
    clock = SystemClock()
    seed(database, clock.now())
    tokens = TokenService(Context(database, clock))
    secrets = {
        role: tokens.create(
            tenant=TENANT, role=role, name=f"{role.value}-browser", actor="seed"
        ).secret
        for role in Role
    }
    node = Node(database, NodeOptions(dispatcher=False, workers=1), clock)
    node.start()
    app = create_app(database, clock, on_change=node.wake, on_enqueue=node.wake_workers, ui=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started:
            break
        threading.Event().wait(0.01)
    assert server.started, "uvicorn did not start"
    try:
        yield World(f"http://127.0.0.1:{port}", database, secrets)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        node.stop(timeout=10)
        database.dispose()


def sign_in(page: Any, world: World, role: Role = Role.ADMIN) -> None:
    """Sign in through the form with the token of `role`."""
    page.goto("/login")
    page.get_by_label("API token").fill(world.tokens[role])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(world.url + "/")


def add_schedule(
    world: World,
    name: str,
    *,
    job: str = "build-report",
    stack: str = "billing",
    cron: str = "0 3 * * *",
    enabled: bool = True,
    timezone: str = "UTC",
) -> None:
    """A row of the test's own in tenant `demo` (prod), created through the service."""
    service = ScheduleService(world.database, SystemClock())
    spec = ScheduleSpec(job=job, cron=cron, name=name, enabled=enabled, timezone=timezone)
    service.create_schedule(Scope(TENANT, stack, "prod"), spec, actor="test")


def add_job(world: World, stack: str, name: str, target: str, options: dict[str, Any]) -> None:
    """A job of the test's own in tenant `demo`."""
    service = ScheduleService(world.database, SystemClock())
    spec = JobSpec(name=name, target=target, title=name, options=options)
    service.register_job(TENANT, stack, spec, actor="test")
