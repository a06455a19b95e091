"""The create route's short way (`cronplane.api.direct`) answers exactly as FastAPI's standard path."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import V1, Api, bearer
from fastapi import Request

from cronplane.api import auth
from cronplane.api.direct import DirectRoute
from cronplane.core.access import Principal

S = "/tenants/acme/schedules"
GOOD = {"job": "report", "cron": "*/5 * * * *", "stack": "billing", "environment": "prod"}


def _unused() -> None:
    """A dependency no route has: overriding it sends every request the standard way."""


def _standard_only(api: Api) -> None:
    api.app.dependency_overrides[_unused] = _unused


def _answer(response: Any) -> tuple[int, Any, dict[str, str | None]]:
    headers = ("content-type", "www-authenticate", "etag", "location")
    return response.status_code, response.json(), {h: response.headers.get(h) for h in headers}


@pytest.fixture
def rule_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each time the standard path authenticates (FastAPI solving a route's `Authorizer`)."""
    calls: list[str] = []
    standard = auth.authenticate

    async def counted(request: Request, credentials: Any) -> Principal:
        calls.append(request.method)
        return await standard(request, credentials)

    monkeypatch.setattr(auth, "authenticate", counted)
    return calls


def test_a_plain_create_is_answered_directly_as_the_standard_path_answers(
    seeded: Api, rule_calls: list[str]
) -> None:
    first = seeded.call("POST", S, json={**GOOD, "name": "first"})  # token not yet remembered
    assert first.status_code == 201, first.text
    assert rule_calls == ["POST"]
    direct = seeded.call("POST", S, json={**GOOD, "name": "direct"})
    assert direct.status_code == 201, direct.text
    assert rule_calls == ["POST"], "the remembered token's create took the standard path"
    _standard_only(seeded)
    standard = seeded.call("POST", S, json={**GOOD, "name": "standard"})
    assert rule_calls == ["POST", "POST"]

    def comparable(response: Any) -> tuple[int, Any, dict[str, str | None]]:
        status, body, headers = _answer(response)
        body = {k: v for k, v in body.items() if k not in ("id", "name")}
        headers["location"] = str(headers["location"]).rsplit("/", 1)[0]
        return status, body, headers

    assert comparable(direct) == comparable(standard) == comparable(first)
    assert seeded.call("GET", f"{S}/billing/prod/direct").json() == direct.json()


def _refusals(api: Api) -> dict[str, Any]:
    """Requests the short way must leave to the standard path, and what they answer."""
    acme = api.headers("acme")
    platform = api.headers(None)
    json_type = {"Content-Type": "application/json"}
    cases: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
        "undecodable JSON": (S, {**acme, **json_type}, {"content": b"{not json"}),
        "empty body": (S, {**acme, **json_type}, {"content": b""}),
        "null body": (S, {**acme, **json_type}, {"content": b"null"}),
        "array body": (S, {**acme, **json_type}, {"content": b"[1]"}),
        "not JSON content type": (
            S,
            {**acme, "Content-Type": "text/plain"},
            {"content": b'{"job": "report", "cron": "@daily"}'},
        ),
        "unknown field": (S, acme, {"json": {**GOOD, "name": "x", "evil": 1}}),
        "missing cron": (S, acme, {"json": {"job": "report"}}),
        "wrong type": (S, acme, {"json": {**GOOD, "name": "x", "enabled": "maybe"}}),
        "payload not an object": (S, acme, {"json": {**GOOD, "name": "x", "payload": [1]}}),
        "another tenant": ("/tenants/globex/schedules", acme, {"json": GOOD}),
        "tenant over the bound": (f"/tenants/{'t' * 300}/schedules", platform, {"json": GOOD}),
        "role without CREATE": (S, api.headers("acme", "viewer"), {"json": GOOD}),
        "no token": (S, {}, {"json": GOOD}),
        "unknown token": (S, bearer("cpt_nope"), {"json": GOOD}),
        "basic auth": (S, {"Authorization": "Basic eDp5"}, {"json": GOOD}),
        "unknown job": (S, acme, {"json": {**GOOD, "job": "nope", "name": "x"}}),
        "bad cron": (S, acme, {"json": {**GOOD, "cron": "61 * * * *", "name": "x"}}),
        "taken name": (S, acme, {"json": {**GOOD, "name": "acme-nightly"}}),
    }
    answers = {}
    for case, (path, headers, send) in cases.items():
        answers[case] = _answer(api.client.post(V1 + path, headers=headers, **send))
    return answers


def test_every_refusal_is_the_standard_paths_answer(seeded: Api) -> None:
    for tenant, role in (("acme", "admin"), ("acme", "viewer"), (None, "admin")):
        # Remembered tokens: the short way judges these requests itself first.
        assert seeded.call("GET", "/whoami", tenant=tenant, role=role).status_code == 200
    direct = _refusals(seeded)
    _standard_only(seeded)
    standard = _refusals(seeded)
    for case, answer in standard.items():
        assert 400 <= answer[0] < 500, (case, answer)
        assert direct[case] == answer, case


def test_the_route_class_refuses_an_endpoint_of_another_shape() -> None:
    async def other(request: Any, tenant: str) -> None:
        """Not (request, principal, tenant, body)."""

    with pytest.raises(TypeError, match="other"):
        DirectRoute("/x/{tenant}", other, methods=["POST"])
