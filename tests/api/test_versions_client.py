"""The public client's version methods (issue 38) against a real server over each
database: the answers decode to the same records the service returns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import make_api
from cli_process import run_cronplane
from live_server import serving

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.errors import NothingToRestore, VersionNotFound
from cronplane.store.database import Database

TARGET = "python:billing.jobs:report"


@pytest.fixture
def served(database: Database) -> Iterator[tuple[str, str]]:
    api = make_api(database)
    token = api.token("acme", Role.ADMIN)
    with serving(database) as url:
        yield url, token


def test_versions_through_the_client(served: tuple[str, str]) -> None:
    url, token = served
    with Client(url, token, tenant="acme") as client:
        client.jobs.register("report", TARGET)
        client.schedules.create("report", "0 * * * *", name="hourly")
        client.schedules.update("hourly", cron="15 * * * *")
        versions = client.schedules.versions("hourly")
        assert [v.number for v in versions] == [2, 1] and versions[0].via == "api"
        shown = client.schedules.diff("hourly")
        assert [c.field for c in shown.changes] == ["cron"] and len(shown.runs[1]) == 5
        assert all(run.minute == 15 for run in shown.runs[1])
        done = client.schedules.rollback("hourly", to=1, reason="revert")
        assert not done.dry_run and done.schedule.cron == "0 * * * *" and done.to == 1
        with pytest.raises(VersionNotFound):
            client.schedules.rollback("hourly", to=99)
        client.schedules.remove("hourly")
        assert client.schedules.restore("hourly", reason="oops").cron == "0 * * * *"
        with pytest.raises(NothingToRestore):
            client.schedules.restore("never")


def test_the_remote_cli_stamps_cli_and_its_reason(served: tuple[str, str], tmp_path: Path) -> None:
    """`cronplane --url … schedule window … --reason` (the installed command, remote):
    its version says `via: cli` and carries the reason, UTF-8 included."""
    url, token = served
    with Client(url, token, tenant="acme") as client:
        client.jobs.register("report", TARGET)
        client.schedules.create("report", "0 * * * *", name="hourly")
    env = {"CRONPLANE_URL": url, "CRONPLANE_TOKEN": token, "CRONPLANE_TENANT": "acme"}
    done = run_cronplane(
        "schedule", "window", "hourly", "--max-runs", "4", "--reason", "café rush",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    with Client(url, token, tenant="acme") as client:
        latest = client.schedules.versions("hourly")[0]
    assert (latest.number, latest.via, latest.reason) == (2, "cli", "café rush")
