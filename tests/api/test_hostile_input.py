"""Hostile input over HTTP (issue 21): every refusal coded, names reachable, secrets kept.

Each test here failed before the fix: a lone surrogate answered 500, `.` and
`..` were accepted as names, a plaintext webhook secret was stored and shown
to viewers, the OpenAPI document left the real constraints out, a 405 named
one method of several, and `dry_run: 0` was taken as false.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any
from uuid import uuid4

import pytest
from api_support import Api

from cronplane.core.versions import Change
from cronplane.store import jobs as job_store
from cronplane.targets.webhook import SecretKeyring

SURROGATE_BODIES = [{"a": "\ud800"}, {"\udfff": 1}, {"nested": [{"k": "x\ud83dy"}]}]
NUL_BODY = {"a": "nul\u0000here"}


def post_raw(api: Api, method: str, path: str, body: dict[str, Any], **kw: Any) -> Any:
    """Send `body` as escaped JSON (`"\\ud800"`), as a hostile client can."""
    return api.call(
        method,
        path,
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **kw.pop("headers", {})},
        **kw,
    )


def assert_coded_400(response: Any, code: str | None = None) -> None:
    assert response.status_code == 400, response.text
    got = response.json()["code"]
    assert re.fullmatch(r"X400\d{3}[A-Z]{6}", got), got
    if code is not None:
        assert got == code, response.text


@pytest.mark.parametrize("payload", [*SURROGATE_BODIES, NUL_BODY])
def test_unstorable_payloads_are_a_coded_400_on_every_write(seeded: Api, payload: Any) -> None:
    schedule = {"job": "report", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    writes = [
        ("POST", "/tenants/acme/schedules", {**schedule, "name": "s1", "payload": payload}),
        ("PATCH", "/tenants/acme/schedules/billing/prod/acme-nightly", {"payload": payload}),
        ("POST", "/tenants/acme/jobs", {"name": "j1", "target": "python:m:f", "payload": payload}),
        ("POST", "/tenants/acme/jobs", {"name": "j2", "target": "python:m:f", "options": payload}),
        ("PATCH", "/tenants/acme/jobs/billing/report", {"payload": payload}),
        (
            "POST",
            "/tenants/acme/sync",
            {
                "stack": "billing",
                "crons": {"c1": {"cron": "1 1 * * *", "job": "report", "payload": payload}},
            },
        ),
        (
            "POST",
            "/api/method/shc.schedule.sync",
            {
                "stack": "billing",
                "crons": {"c1": {"cron": "1 1 * * *", "job": "report", "payload": payload}},
            },
        ),
        (
            "POST",
            "/tenants/acme/apps",
            {
                "manifest": {
                    "name": "app1",
                    "jobs": {"j": {"target": "python:m:f", "payload": payload}},
                }
            },
        ),
    ]
    for method, path, body in writes:
        assert_coded_400(post_raw(seeded, method, path, body))
    listed = seeded.call("GET", "/tenants/acme/schedules").json()["items"]
    assert [item["name"] for item in listed] == ["acme-nightly"]  # nothing changed


def test_unstorable_text_fields_are_a_coded_400(seeded: Api) -> None:
    bad = "x\ud800"
    assert_coded_400(
        post_raw(
            seeded,
            "POST",
            "/tenants/acme/jobs",
            {"name": "j", "target": "python:m:f", "title": bad},
        )
    )
    assert_coded_400(
        post_raw(
            seeded, "POST", "/tenants/acme/jobs", {"name": "j", "target": f"webhook:http://{bad}/"}
        )
    )
    assert_coded_400(
        post_raw(
            seeded,
            "POST",
            "/tenants/acme/jobs",
            {"name": "j", "target": "python:m:f", "title": "a\u0000"},
        )
    )
    body = {"job": "report", "cron": "* * * * *", "stack": "billing", "environment": "prod"}
    assert_coded_400(post_raw(seeded, "POST", "/tenants/acme/schedules", {**body, "timezone": bad}))
    assert_coded_400(post_raw(seeded, "POST", "/tenants/acme/schedules", {**body, "cron": bad}))


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_names_are_refused_with_the_name_error(seeded: Api, name: str) -> None:
    base = {"job": "report", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    for body in (
        {**base, "name": name},
        {**base, "name": "ok1", "stack": name},
        {**base, "name": "ok2", "environment": name},
    ):
        assert_coded_400(seeded.call("POST", "/tenants/acme/schedules", json=body), "X400005NAMINV")
    for body in (
        {"name": name, "target": "python:m:f"},
        {"name": "ok", "stack": name, "target": "python:m:f"},
    ):
        assert_coded_400(seeded.call("POST", "/tenants/acme/jobs", json=body), "X400005NAMINV")
    # A sync answers with the manifest error, which lists the name error.
    for sync in (
        {"stack": name, "crons": {"c": {"cron": "1 1 * * *", "job": "report"}}},
        {"stack": "billing", "environment": name, "crons": {}},
        {"stack": "billing", "crons": {name: {"cron": "1 1 * * *", "job": "report"}}},
    ):
        answer = seeded.call("POST", "/tenants/acme/sync", json=sync)
        assert_coded_400(answer)
        assert "X400005NAMINV" in answer.text
    app = {"manifest": {"name": name, "jobs": {}, "crons": {}}}
    assert seeded.call("POST", "/tenants/acme/apps", json=app).json()["code"] == "X400006MANINV"
    listed = seeded.call("GET", "/tenants/acme/schedules").json()["items"]
    assert [item["name"] for item in listed] == ["acme-nightly"]


def test_names_that_start_with_dots_but_are_not_dot_segments_stay_valid(seeded: Api) -> None:
    base = {"job": "report", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    for name in (".hidden", "...", "a.b", "..x"):
        created = seeded.call("POST", "/tenants/acme/schedules", json={**base, "name": name})
        assert created.status_code == 201, created.text
        got = seeded.call("GET", f"/tenants/acme/schedules/billing/prod/{name}")
        assert got.status_code == 200 and got.json()["name"] == name


KEYRING = SecretKeyring(b"k" * 32)
PLAIN = "hunter2-plain-secret"


def test_a_plaintext_webhook_secret_is_refused_at_registration(seeded: Api) -> None:
    body = {"name": "hook", "target": "webhook:https://example.com/h", "options": {"secret": PLAIN}}
    refused = seeded.call("POST", "/tenants/acme/jobs", json=body)
    assert_coded_400(refused)
    assert "seal" in refused.json()["message"]
    assert PLAIN not in refused.text
    for secret in (42, "", "sealed:v1:", "sealed:v1:not a token!"):
        body["options"] = {"secret": secret}
        assert_coded_400(seeded.call("POST", "/tenants/acme/jobs", json=body))
    assert seeded.call("GET", "/tenants/acme/jobs/default/hook").status_code == 404
    # A patch cannot put one in either.
    body["options"] = {"secret": KEYRING.seal(PLAIN)}
    assert seeded.call("POST", "/tenants/acme/jobs", json=body).status_code == 201
    patch = {"options": {"secret": PLAIN}}
    assert_coded_400(seeded.call("PATCH", "/tenants/acme/jobs/default/hook", json=patch))
    app = {
        "manifest": {
            "name": "hooks",
            "jobs": {
                "h": {"target": "webhook:https://example.com/h", "options": {"secret": PLAIN}}
            },
        }
    }
    assert seeded.call("POST", "/tenants/acme/apps", json=app).json()["code"] == "X400006MANINV"


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda match: values[match.group(1)], path)


def test_no_read_route_returns_a_stored_secret_to_a_viewer(seeded: Api) -> None:
    sealed = KEYRING.seal("their-receiver-secret")
    body = {"name": "hook", "stack": "billing", "target": "webhook:https://example.com/h"}
    created = seeded.call(
        "POST", "/tenants/acme/jobs", json={**body, "options": {"secret": sealed}}
    )
    assert created.status_code == 201, created.text
    # A row stored before the rule (plaintext) must not leak either.
    legacy = replace(
        seeded.service.get_job("acme", "billing", "hook"),
        id=uuid4(),
        name="legacy",
        options={"secret": PLAIN, "timeout": 5},
    )
    with seeded.database.begin() as conn:
        assert job_store.insert_job(
            conn, legacy, change=Change("test", "system", legacy.updated_at)
        )
    schedule = {"job": "hook", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    assert (
        seeded.call(
            "POST", "/tenants/acme/schedules", json={**schedule, "name": "hook"}
        ).status_code
        == 201
    )
    run = seeded.call("POST", "/tenants/acme/schedules/billing/prod/hook/run", json={})
    item_id = (
        run.json().get("id", "00000000-0000-4000-8000-000000000000")
        if run.status_code < 300
        else "0"
    )
    values = {
        "tenant": "acme",
        "stack": "billing",
        "environment": "prod",
        "name": "hook",
        "item_id": item_id,
        "number": "1",  # a schedule's first version (its creation)
    }
    document = seeded.client.get("/api/v1/openapi.json")
    assert document.status_code == 200
    walked = 0
    for path, operations in document.json()["paths"].items():
        if "get" not in operations:
            continue
        for name in ("hook", "legacy"):
            url = _fill(path, {**values, "name": name})
            answer = seeded.client.get(url, headers=seeded.headers("acme", "viewer"))
            walked += 1
            assert answer.status_code < 500, (url, answer.text)
            for secret in (PLAIN, sealed, sealed.removeprefix("sealed:v1:")):
                assert secret not in answer.text, url
    assert walked >= 20
    job = seeded.call("GET", "/tenants/acme/jobs/billing/legacy", role="viewer").json()
    assert job["options"]["timeout"] == 5 and job["options"]["secret"] != PLAIN


def test_the_openapi_document_describes_the_real_constraints(api: Api) -> None:
    document = api.client.get("/api/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    create = schemas["ScheduleCreate"]["properties"]
    name_pattern = create["job"]["pattern"]
    assert create["job"]["maxLength"] == 64
    for good in ("a", "a.b", ".x", "...", "x" * 64):
        assert re.search(name_pattern, good), good
    for bad in (".", "..", "", "a/b", "x" * 65, "a b"):
        assert not re.search(name_pattern, bad), bad
    assert create["cron"]["maxLength"] == 256
    target = schemas["JobCreate"]["properties"]["target"]
    assert re.search(target["pattern"], "webhook:https://example.com/h")
    assert re.search(target["pattern"], "python:pkg.mod:fn")
    assert not re.search(target["pattern"], "ftp:somewhere")
    patch = document["paths"]["/api/v1/tenants/{tenant}/schedules/{stack}/{environment}/{name}"][
        "patch"
    ]
    if_match = next(p for p in patch["parameters"] if p["name"] == "If-Match")
    # `pattern` constrains strings only, so it may sit beside the string|null anyOf.
    pattern = if_match["schema"].get("pattern") or if_match["schema"]["anyOf"][0]["pattern"]
    for good in ('"3"', 'W/"3"', "*", "12"):
        assert re.search(pattern, good), good
    assert not re.search(pattern, "abc")


def test_the_server_still_answers_its_own_codes_for_constrained_fields(seeded: Api) -> None:
    base = {"job": "report", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    bad_name = seeded.call("POST", "/tenants/acme/schedules", json={**base, "name": "a/b"})
    assert_coded_400(bad_name, "X400005NAMINV")
    long_cron = seeded.call("POST", "/tenants/acme/schedules", json={**base, "cron": "1 " * 200})
    assert_coded_400(long_cron, "X400001CRNINV")
    bad_target = seeded.call("POST", "/tenants/acme/jobs", json={"name": "j", "target": "ftp:x"})
    assert_coded_400(bad_target, "X400008TGTINV")
    bad_if_match = seeded.call(
        "PATCH",
        "/tenants/acme/schedules/billing/prod/acme-nightly",
        json={},
        headers={"If-Match": "abc"},
    )
    assert_coded_400(bad_if_match, "X400007REQINV")


def test_a_405_lists_every_method_of_the_path(seeded: Api) -> None:
    answer = seeded.call("DELETE", "/tenants/acme/jobs")
    assert answer.status_code == 405 and answer.json()["code"] == "X405001METHOD"
    assert {m.strip() for m in answer.headers["allow"].split(",")} >= {"GET", "POST"}
    answer = seeded.call("PUT", "/tenants/acme/schedules/billing/prod/acme-nightly")
    assert {m.strip() for m in answer.headers["allow"].split(",")} >= {"GET", "PATCH", "DELETE"}


@pytest.mark.parametrize("value", [0, 1, "true", "false", None, [], 0.0])
def test_booleans_are_strict(seeded: Api, value: Any) -> None:
    sync = {"stack": "billing", "crons": {}, "dry_run": value}
    assert_coded_400(seeded.call("POST", "/tenants/acme/sync", json=sync))
    assert_coded_400(seeded.call("POST", "/api/method/shc.schedule.sync", json=sync))
    app = {"manifest": {"name": "app1"}, "dry_run": value}
    assert_coded_400(seeded.call("POST", "/tenants/acme/apps", json=app))
    base = {"job": "report", "cron": "5 4 * * *", "stack": "billing", "environment": "prod"}
    created = seeded.call(
        "POST", "/tenants/acme/schedules", json={**base, "name": "b", "enabled": value}
    )
    assert_coded_400(created)
    if value is not None:  # `enabled: null` in a patch means "leave it"
        patched = seeded.call(
            "PATCH", "/tenants/acme/schedules/billing/prod/acme-nightly", json={"enabled": value}
        )
        assert_coded_400(patched)
