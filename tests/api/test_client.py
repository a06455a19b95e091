"""The public Python client (`cronplane.client.Client`, docs/client.md) against a real
server: uvicorn on loopback over each database, and `cronplane serve` with a worker.

Every claim of docs/client.md is exercised here: the resources, paging by
iteration, the controls, runs, alerts, and coded errors raised as the same
`CronplaneError` classes the service raises.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from api_support import make_api
from live_server import serving
from test_serve import cronplane, free_port

from cronplane import client as client_package
from cronplane.client import Client, RemoteService
from cronplane.client import client as client_module
from cronplane.client import schedules as schedules_module
from cronplane.core.access import Role
from cronplane.errors import (
    AlertNotFound,
    ChannelExists,
    Forbidden,
    JobNotFound,
    QueueItemNotFound,
    ScheduleExists,
    ScheduleNotFound,
    StaleRevision,
    TenantNotFound,
    Unauthenticated,
    Unavailable,
)
from cronplane.store.database import Database

TARGET = "python:billing.jobs:report"


@pytest.fixture
def served(database: Database) -> Iterator[tuple[str, str, str]]:
    """(url, acme admin token, acme viewer token) of a real server over `database`."""
    api = make_api(database)
    admin, viewer = api.token("acme", Role.ADMIN), api.token("acme", Role.VIEWER)
    with serving(database) as url:
        yield url, admin, viewer


def test_jobs_and_schedules_round_trip(served: tuple[str, str, str]) -> None:
    url, token, _ = served
    with Client(url, token, tenant="acme", stack="billing", environment="prod") as client:
        job = client.jobs.register("report", TARGET, title="Report", payload={"n": 1})
        assert (job.tenant, job.stack, job.name, job.payload) == (
            "acme",
            "billing",
            "report",
            {"n": 1},
        )
        assert client.jobs.get("report").id == job.id
        assert [j.name for j in client.jobs.list()] == ["report"]
        updated = client.jobs.update("report", title="Daily report", revision=job.revision)
        assert updated.title == "Daily report" and updated.revision == job.revision + 1

        created = client.schedules.create("report", "0 2 * * *", name="nightly", timezone="UTC")
        assert (created.name, created.job, created.cron, created.enabled) == (
            "nightly", "report", "0 2 * * *", True,
        )  # fmt: skip
        assert created.next_run is not None
        assert client.schedules.get("nightly").id == created.id
        edited = client.schedules.update("nightly", cron="30 3 * * *", payload={"n": 2})
        assert (edited.cron, edited.payload) == ("30 3 * * *", {"n": 2})
        cleared = client.schedules.update("nightly", timeout=60)
        assert cleared.timeout == 60
        assert client.schedules.update("nightly", timeout=None).timeout is None
        # Any field of the table passes through, a new one (the DST policy) too.
        policy = client.schedules.update("nightly", dst_repeat="second", timezone="Europe/London")
        assert (policy.dst_gap, policy.dst_repeat) == ("shift", "second")
        with pytest.raises(TypeError, match="not_a_field"):
            client.schedules.update("nightly", not_a_field=1)

        removed = client.schedules.remove("nightly")
        assert removed.id == created.id
        with pytest.raises(ScheduleNotFound):
            client.schedules.get("nightly")
        assert client.jobs.deactivate("report").status == "inactive"


def test_list_iterates_every_page_in_the_client_scope(served: tuple[str, str, str]) -> None:
    url, token, _ = served
    with Client(url, token, tenant="acme", stack="billing", environment="prod") as client:
        client.jobs.register("report", TARGET)
        names = [f"s{n:02d}" for n in range(7)]
        for name in reversed(names):
            client.schedules.create("report", "@hourly", name=name)
        staging = client.scoped(environment="staging")
        staging.schedules.create("report", "@daily", name="elsewhere")
        # 7 rows in pages of 2: four requests, one iteration, in (name, stack, env) order.
        assert [s.name for s in client.schedules.list(page_size=2)] == names
        assert [s.name for s in staging.schedules.list()] == ["elsewhere"]
        every = [s.name for s in client.schedules.list(all_stacks=True, page_size=3)]
        assert every == sorted([*names, "elsewhere"])
        assert [s.name for s in client.schedules.list(search="S0")] == names
        client.schedules.disable("s03")
        assert [s.name for s in client.schedules.list(enabled=False)] == ["s03"]
        first = client.schedules.page()
        assert first.next_cursor is None and len(first.items) == 8


def test_controls(served: tuple[str, str, str]) -> None:
    url, token, _ = served
    with Client(url, token, tenant="acme") as client:
        client.jobs.register("report", TARGET)
        schedule = client.schedules.create("report", "0 * * * *", name="hourly")
        until = datetime.now(UTC) + timedelta(days=2)
        paused = client.schedules.pause("hourly", until=until, note="maintenance")
        assert paused.state == "paused" and paused.paused_note == "maintenance"
        assert paused.paused_until is not None
        assert abs((paused.paused_until - until).total_seconds()) < 1
        assert paused.paused_missed is None
        # What the pause's own end does with what it passed (issue 36).
        again = client.schedules.pause("hourly", until=until, missed="once")
        assert again.paused_missed == "once" and again.paused_at == paused.paused_at
        resumed = client.schedules.resume("hourly")
        assert resumed.state == "active" and resumed.paused_at is None
        assert client.schedules.disable("hourly").state == "inactive"
        assert client.schedules.enable("hourly").state == "active"

        start = schedule.created_at.replace(minute=0, second=0, microsecond=0)
        report = client.schedules.backfill(
            "hourly", start=start - timedelta(hours=3), end=start, dry_run=True
        )
        assert report.dry_run and len(report.occurrences) == 3
        history = client.schedules.history("hourly")
        # Newest first: enabled, disabled, resumed, paused, created (each its own code).
        assert len(history) >= 5 and history[0].id > history[-1].id
        assert {event.schedule_name for event in history} == {"hourly"}

        # A write based on a stale read is refused, as the CLI's is.
        current = client.schedules.get("hourly")
        client.schedules.update("hourly", jitter=5, revision=current.revision)
        with pytest.raises(StaleRevision):
            client.schedules.pause("hourly", revision=current.revision)


def test_runs(served: tuple[str, str, str]) -> None:
    url, token, _ = served
    with Client(url, token, tenant="acme") as client:
        client.jobs.register("report", TARGET)
        schedule = client.schedules.create("report", "0 0 1 1 *", name="yearly")
        item = client.schedules.run("yearly", payload={"once": True})
        assert (item.status, item.payload, item.schedule_id) == (
            "queued",
            {"once": True},
            schedule.id,
        )
        assert client.runs.get(item.id).id == item.id
        assert client.runs.get(str(item.id)).id == item.id
        assert [i.id for i in client.runs.list(schedule_id=schedule.id)] == [item.id]
        assert [i.id for i in client.runs.list(status="queued")] == [item.id]
        # No worker here: waiting a bounded time answers the item as it is.
        assert client.runs.wait(item.id, timeout=0.2).status == "queued"
        assert client.runs.cancel(item.id).status == "cancelled"
        with pytest.raises(QueueItemNotFound):
            client.runs.get("00000000-0000-0000-0000-000000000000")


def test_alerts(served: tuple[str, str, str]) -> None:
    url, token, _ = served
    with Client(url, token, tenant="acme") as client:
        mail = {
            "host": "127.0.0.1",
            "port": 9,
            "sender": "cron@example.com",
            "to": ["o@example.com"],
        }
        channel = client.alerts.add_channel("ops", "email", mail)
        assert (channel.name, channel.kind) == ("ops", "email")
        with pytest.raises(ChannelExists):
            client.alerts.add_channel("ops", "email", mail)
        rule = client.alerts.add_rule("slow", "long", threshold=600, channels=["ops"])
        assert (rule.name, rule.condition, rule.threshold) == ("slow", "long", 600)
        paused = client.alerts.add_rule(
            "paused-long", "skipped", threshold=3600, reasons=["paused"], channels=["ops"]
        )
        assert paused.reasons == ("paused",)
        assert sorted(r.name for r in client.alerts.rules()) == ["paused-long", "slow"]
        assert [c.name for c in client.alerts.channels()] == ["ops"]
        assert client.alerts.list(status="open") == []
        with pytest.raises(AlertNotFound):
            client.alerts.ack("00000000-0000-0000-0000-000000000000")
        assert client.alerts.remove_rule("slow").name == "slow"
        assert client.alerts.remove_rule("paused-long").name == "paused-long"
        assert client.alerts.remove_channel("ops").name == "ops"
        assert client.alerts.channels() == []


def test_coded_errors_are_the_service_classes(served: tuple[str, str, str]) -> None:
    url, token, viewer = served
    with Client(url, token, tenant="acme") as client:
        client.jobs.register("report", TARGET)
        client.schedules.create("report", "@daily", name="daily")
        with pytest.raises(ScheduleExists) as exists:
            client.schedules.create("report", "@daily", name="daily")
        assert exists.value.code.text == "X409900SCHDPL"
        with pytest.raises(JobNotFound):
            client.schedules.create("nobody", "@daily")
        with pytest.raises(JobNotFound):
            client.jobs.get("nobody")
    with Client(url, viewer, tenant="acme") as reader:
        assert [s.name for s in reader.schedules.list()] == ["daily"]
        with pytest.raises(Forbidden):
            reader.schedules.pause("daily")
    with Client(url, "cpt_not-a-token", tenant="acme") as stranger, pytest.raises(Unauthenticated):
        stranger.schedules.get("daily")
    with Client(url, token, tenant="globex") as elsewhere, pytest.raises(TenantNotFound):
        next(elsewhere.schedules.list())
    gone = f"http://127.0.0.1:{free_port()}"
    with Client(gone, token, tenant="acme") as nobody, pytest.raises(Unavailable):
        nobody.jobs.list()


def test_one_http_implementation() -> None:
    """`Client` is a face over `RemoteService`: it builds arguments, the remote CLI's
    request code (client.http) does every request."""
    for module in (client_module, schedules_module, client_package):
        source = inspect.getsource(module)
        assert "_request(" not in source and ".http." not in source, module.__name__
    client = Client("http://127.0.0.1:9", "t", tenant="acme")
    try:
        assert isinstance(client.service, RemoteService)
        other = client.scoped(stack="billing")
        assert other.service is client.service and other.scope.tenant == "acme"
        assert other.scope.stack == "billing"
    finally:
        client.close()


def test_a_run_now_against_cronplane_serve_finishes(tmp_path: Path) -> None:
    """`cronplane serve` (API, dispatcher, a worker) in its own process: the client's run
    is executed, and `runs.wait` answers it succeeded."""
    database_url = f"sqlite:///{tmp_path / 'serve.db'}"
    env = {
        "CRONPLANE_DATABASE_URL": database_url,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    made = cronplane("token", "create", "--tenant", "acme", "--role", "admin", env=env)
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cronplane", "serve", "--port", str(port), "--workers", "1"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        with Client(url, token, tenant="acme") as client:
            client.jobs.register("tick", "python:serve_handlers:tick")
            client.schedules.create("tick", "0 0 1 1 *", payload={"obj": 1})
            item = client.schedules.run("tick")
            done = client.runs.wait(item.id, timeout=30)
            assert done.status == "succeeded", done
            assert done.result == {"echo": {"obj": 1}}
            assert client.schedules.get("tick").name == "tick"
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode in (0, -signal.SIGTERM), output


def test_a_selection_is_listed_and_acted_on_by_its_labels(served: tuple[str, str, str]) -> None:
    """Issue 37: the client names schedules by selector, and acts on the whole selection."""
    url, token, viewer = served
    with Client(url, token, tenant="acme", stack="billing", environment="prod") as client:
        client.jobs.register("report", TARGET)
        for name, team in (("a", "payments"), ("b", "payments"), ("c", "search")):
            client.schedules.create("report", "@hourly", name=name, labels={"team": team})
        picked = [s.name for s in client.schedules.list(selector="team=payments")]
        assert picked == ["a", "b"]
        dry = client.schedules.act("pause", selector="team=payments", dry_run=True, note="m")
        assert dry.dry_run and {row.name for row in dry.rows} == {"a", "b"}
        assert client.schedules.get("a").state == "active"  # a dry run changes nothing
        report = client.schedules.act("pause", selector="team=payments", note="migration")
        assert report.to_dict()["changed"] == 2
        assert [s.name for s in client.schedules.list() if s.state == "paused"] == ["a", "b"]
        again = client.schedules.act("pause", selector="team=payments")
        assert again.to_dict()["already"] == 2
    with Client(url, viewer, tenant="acme", stack="billing", environment="prod") as reader:
        with pytest.raises(Forbidden):  # a viewer may not act at all: a coded 403
            reader.schedules.act("resume", selector="team")
        assert [s.state for s in reader.schedules.list(selector="team=payments")] == [
            "paused",
            "paused",
        ]
