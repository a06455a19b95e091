"""Environments diffed and promoted over HTTP (issue 38), on SQLite and PostgreSQL: the
routes, who may call them, a stale token's refusal (nothing written), and the public
client's `environments` against a live server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import Api, make_api
from live_server import serving

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidName, PromoteConflict
from cronplane.store.database import Database

DIFF = "/tenants/acme/environments/diff"
PROMOTE = "/tenants/acme/environments/promote"
ENVS = {"from_env": "staging", "to_env": "prod"}
TARGET = "python:billing.jobs:report"


def _seed(api: Api) -> None:
    service = api.service
    service.register_job("acme", "billing", JobSpec(name="report", target=TARGET), actor="seed")
    for env, name, cron in (
        ("staging", "nightly", "0 2 * * *"),
        ("staging", "weekly", "0 3 * * 1"),
        ("prod", "nightly", "0 4 * * *"),
        ("prod", "mine", "0 5 * * *"),
    ):
        spec = ScheduleSpec(job="report", cron=cron, name=name)
        service.create_schedule(Scope("acme", "billing", env), spec, actor="seed")


def _prod(api: Api) -> dict[str, Any]:
    listed = api.call("GET", "/tenants/acme/schedules", params={"environment": "prod"}).json()
    return {row["name"]: row for row in listed["items"]}


def test_diff_and_promote_over_http(api: Api) -> None:
    _seed(api)
    shown = api.call("GET", DIFF, params={**ENVS, "stack": "billing"}, role=Role.VIEWER)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    statuses = {s["name"]: s["status"] for s in body["schedules"]}
    assert statuses == {"mine": "only_in_target", "nightly": "differs", "weekly": "only_in_source"}
    (nightly,) = [s for s in body["schedules"] if s["name"] == "nightly"]
    assert nightly["fields"] == [
        {"field": "cron", "target": "0 4 * * *", "source": "0 2 * * *",
         "target_override": False, "source_override": False}
    ]  # fmt: skip
    assert body["summary"]["differs"] == 1 and body["token"].count(".") == 1

    # A promote creates and updates: an operator may not; an editor may.
    denied = api.call("POST", PROMOTE, json={**ENVS, "dry_run": True}, role=Role.OPERATOR)
    assert denied.status_code == 403
    before = _prod(api)
    dry = api.call("POST", PROMOTE, json={**ENVS, "dry_run": True}, role=Role.EDITOR)
    assert dry.status_code == 200, dry.text
    assert dry.json()["summary"] == {
        "created": 1, "updated": 1, "unchanged": 0, "conflicts": 0, "left": 1
    }  # fmt: skip
    assert _prod(api) == before

    # A target row edited since the diff: 409, nothing written.
    edited = api.call("PATCH", "/tenants/acme/schedules/billing/prod/mine", json={"max_runs": 4})
    assert edited.status_code == 200, edited.text
    before = _prod(api)
    given = {**ENVS, "stack": "billing", "token": body["token"]}
    stale = api.call("POST", PROMOTE, json=given, role=Role.EDITOR)
    assert (stale.status_code, stale.json()["code"]) == (409, "X409382PRMCHG")
    assert stale.json()["detail"]["sides"] == ["target"]
    assert _prod(api) == before

    token = api.call("GET", DIFF, params=ENVS).json()["token"]
    done = api.call(
        "POST", PROMOTE, json={**ENVS, "token": token, "reason": "r7"}, role=Role.EDITOR
    )
    assert done.status_code == 200, done.text
    report = done.json()
    assert [s["name"] for s in report["created"]] == ["weekly"]
    assert [s["name"] for s in report["updated"]] == ["nightly"] and report["left"] == [
        "billing/mine"
    ]
    after = _prod(api)
    assert after["nightly"]["cron"] == "0 2 * * *" and after["weekly"]["cron"] == "0 3 * * 1"
    assert after["mine"] == before["mine"]
    versions = api.call("GET", "/tenants/acme/schedules/billing/prod/nightly/versions").json()
    latest = versions["items"][0]
    assert (latest["via"], latest["reason"]) == ("promote", "promoted from staging: r7")
    again = api.call("POST", PROMOTE, json=ENVS).json()
    assert again["summary"]["created"] == again["summary"]["updated"] == 0


def test_refusals_are_coded(api: Api) -> None:
    _seed(api)
    same = api.call("POST", PROMOTE, json={"from_env": "prod", "to_env": "prod"})
    assert same.status_code == 200 and same.json()["summary"]["unchanged"] == 2
    bad = api.call("GET", DIFF, params={"from_env": "staging", "to_env": "no way"})
    assert (bad.status_code, bad.json()["code"]) == (400, "X400005NAMINV")
    unknown = api.call("POST", PROMOTE, json={**ENVS, "only": ["nope"]})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "X404902SCHNFD")
    assert api.call("GET", DIFF, params={"from_env": "staging"}).status_code == 400
    other = api.call("GET", "/tenants/globex/environments/diff", params=ENVS)
    assert (other.status_code, other.json()["code"]) == (404, "X404906TENNFD")


@pytest.fixture
def served(database: Database) -> Iterator[tuple[str, str]]:
    api = make_api(database)
    token = api.token("acme", Role.EDITOR)
    with serving(database) as url:
        yield url, token


def test_the_client_diffs_and_promotes(served: tuple[str, str]) -> None:
    url, token = served
    with Client(url, token, tenant="acme", stack="billing", environment="staging") as client:
        client.jobs.register("report", TARGET)
        client.schedules.create("report", "0 * * * *", name="hourly")
        prod = client.scoped(environment="prod")
        prod.schedules.create("report", "5 * * * *", name="hourly")
        shown = client.environments.diff("staging", "prod", stack="billing")
        assert [(s.name, s.status) for s in shown.schedules] == [("hourly", "differs")]
        assert shown.schedules[0].fields[0].source == "0 * * * *"
        prod.schedules.update("hourly", max_runs=3)
        with pytest.raises(PromoteConflict):
            client.environments.promote("staging", "prod", token=shown.token)
        with pytest.raises(InvalidName):
            client.environments.promote("prod", "pro d")
        done = client.environments.promote("staging", "prod", reason="go")
        assert [s.key for s in done.updated] == ["billing/hourly"] and not done.dry_run
        assert prod.schedules.get("hourly").cron == "0 * * * *"
        assert prod.schedules.versions("hourly")[0].via == "promote"
