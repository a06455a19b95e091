"""Job versions over real HTTP (issue 38), on SQLite and PostgreSQL: a served API
(uvicorn) called with httpx — the routes, their refusals, how each change is
stamped — and the installed `cronplane job versions|diff|rollback`, local on the
database and remote with --url, answering the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import make_api
from cli_process import Outcome, run_cronplane
from live_server import serving

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.errors import JobVersionNotFound
from cronplane.store.database import Database

JOB = "/api/v1/tenants/acme/jobs/billing/report"
TARGET = "python:billing.jobs:report"


@pytest.fixture
def served(database: Database) -> Iterator[tuple[str, httpx.Client]]:
    api = make_api(database)
    token = api.token("acme", Role.ADMIN)
    with serving(database) as url:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            yield url, http


def _register(http: httpx.Client) -> None:
    body = {"name": "report", "stack": "billing", "target": TARGET, "payload": {"a": 1}}
    assert http.post("/api/v1/tenants/acme/jobs", json=body).status_code == 201


def test_versions_diff_rollback(served: tuple[str, httpx.Client]) -> None:
    _, http = served
    _register(http)
    edited = http.patch(JOB, json={"title": "Report"}, headers={"X-Cronplane-Reason": "ticket 9"})
    assert edited.status_code == 200, edited.text
    listed = http.get(JOB + "/versions").json()
    assert [v["number"] for v in listed["items"]] == [2, 1] and listed["next_before"] is None
    latest = listed["items"][0]
    assert (latest["via"], latest["reason"], latest["definition"]["title"]) == (
        "api", "ticket 9", "Report"
    )  # fmt: skip
    assert http.get(JOB + "/versions", params={"limit": 1}).json()["next_before"] == 2
    assert http.get(JOB + "/versions/1").json()["definition"]["title"] == ""
    shown = http.get(JOB + "/diff").json()
    assert [c["field"] for c in shown["changes"]] == ["title"]
    assert (shown["before"]["number"], shown["after"]["number"]) == (1, 2)

    dry = http.post(JOB + "/rollback", json={"to": 1, "dry_run": True})
    assert dry.status_code == 200 and dry.json()["job"]["title"] == ""
    assert len(http.get(JOB + "/versions").json()["items"]) == 2
    stale = http.post(JOB + "/rollback", json={"to": 1}, headers={"If-Match": '"1"'})
    assert (stale.status_code, stale.json()["code"]) == (412, "X412001REVSTL")
    done = http.post(
        JOB + "/rollback",
        json={"to": 1, "reason": "revert"},
        headers={"If-Match": edited.headers["etag"]},
    )
    assert done.status_code == 200, done.text
    assert done.json()["job"]["title"] == "" and done.headers["etag"] == '"3"'
    assert [c["field"] for c in done.json()["changes"]] == ["title"]
    latest = http.get(JOB + "/versions").json()["items"][0]
    assert (latest["number"], latest["via"], latest["reason"]) == (3, "rollback", "revert")


def test_refusals_are_coded_and_change_nothing(served: tuple[str, httpx.Client]) -> None:
    _, http = served
    _register(http)
    unknown = http.post(JOB + "/rollback", json={"to": 7})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "X404384JVRNFD")
    assert http.get(JOB + "/versions/7").json()["code"] == "X404384JVRNFD"
    assert http.get(JOB + "/diff", params={"from": 7}).json()["code"] == "X404384JVRNFD"
    gone = http.get("/api/v1/tenants/acme/jobs/billing/nope/versions")
    assert (gone.status_code, gone.json()["code"]) == (404, "X404903JOBNFD")
    assert len(http.get(JOB + "/versions").json()["items"]) == 1


def test_the_cli_local_and_remote_answer_the_same(
    served: tuple[str, httpx.Client], database: Database, tmp_path: Path
) -> None:
    """The installed command on the database, and with `--url` against the server."""
    url, http = served
    _register(http)
    token = http.headers["Authorization"].removeprefix("Bearer ")
    base = {"CRONPLANE_TENANT": "acme", "CRONPLANE_STACK": "billing"}
    on_file = {**base, "CRONPLANE_DATABASE_URL": database.url, "CRONPLANE_ACTOR": "cli:local"}
    served_env = {**base, "CRONPLANE_TOKEN": token, "CRONPLANE_DATABASE_URL": None}

    def local(*args: str) -> Outcome:
        return run_cronplane(*args, env=on_file, cwd=tmp_path)

    def remote(*args: str) -> Outcome:
        return run_cronplane("--url", url, *args, env=served_env, cwd=tmp_path)

    def both(*args: str) -> Any:
        here, there = local(*args, "--json"), remote(*args, "--json")
        assert here.code == 0 and there.code == 0, (here.stderr, there.stderr)
        assert here.json() == there.json()
        return here.json()

    assert http.patch(JOB, json={"payload": {"a": 2}}).status_code == 200
    assert [v["number"] for v in both("job", "versions", "report")] == [2, 1]
    assert [c["field"] for c in both("job", "diff", "report", "1", "2")["changes"]] == ["payload"]
    dry = both("job", "rollback", "report", "--to", "1", "--dry-run")
    assert dry["dry_run"] and dry["job"]["payload"] == {"a": 1}
    rolled = remote("job", "rollback", "report", "--to", "1", "--reason", "café", "--json")
    assert rolled.code == 0, rolled.stderr
    assert rolled.json()["job"]["payload"] == {"a": 1} and rolled.json()["job"]["revision"] == 3
    again = local("job", "rollback", "report", "--to", "2", "--json")
    assert again.code == 0 and again.json()["job"]["payload"] == {"a": 2}
    listed = both("job", "versions", "report")
    assert [(v["number"], v["via"], v["reason"]) for v in listed][:2] == [
        (4, "rollback", None),
        (3, "rollback", "café"),
    ]
    assert listed[0]["actor"] == "cli:local" and listed[1]["actor"] != "cli:local"
    table = remote("job", "versions", "report")
    assert table.code == 0 and "rollback" in table.stdout and TARGET in table.stdout
    assert table.stdout == local("job", "versions", "report").stdout
    shown = local("job", "diff", "report")
    assert shown.code == 0 and "version 3 -> version 4" in shown.stdout
    assert "payload" in shown.stdout
    for run in (local, remote):
        missing = run("job", "rollback", "report", "--to", "9")
        assert missing.code == 3 and missing.stderr.startswith("X404384JVRNFD")
        stale = run("job", "rollback", "report", "--to", "1", "--revision", "1")
        assert stale.code == 5 and "X412001REVSTL" in stale.stderr
    assert len(both("job", "versions", "report")) == 4


def test_the_public_client(served: tuple[str, httpx.Client]) -> None:
    url, http = served
    token = http.headers["Authorization"].removeprefix("Bearer ")
    with Client(url, token, tenant="acme", stack="billing") as client:
        client.jobs.register("report", TARGET)
        client.jobs.deactivate("report")
        versions = client.jobs.versions("report")
        assert [(v.number, v.via) for v in versions] == [(2, "api"), (1, "api")]
        assert [c.field for c in client.jobs.diff("report").changes] == ["status"]
        done = client.jobs.rollback("report", to=1, reason="still needed")
        assert done.job.status == "active" and done.to == 1 and not done.dry_run
        with pytest.raises(JobVersionNotFound):
            client.jobs.rollback("report", to=99)
