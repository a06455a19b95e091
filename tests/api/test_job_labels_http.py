"""A job's labels over HTTP (issue 37, per job): POST and PATCH take them (the rules
described in the OpenAPI document), GET answers them, `GET …/jobs?selector=` selects;
a bad label or selector is 400 X400007REQINV and changes nothing; the client too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_support import make_api
from live_server import serving

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.core.labels import KEY_REGEX
from cronplane.errors import InvalidRequest
from cronplane.store.database import Database

JOBS = "/tenants/acme/jobs"


def test_job_labels_through_the_api(database: Database) -> None:
    api = make_api(database)
    body = {"name": "pay", "target": "python:app.jobs:pay", "stack": "billing"}
    made = api.call("POST", JOBS, json={**body, "labels": {"team": "payments"}})
    assert made.status_code == 201 and made.json()["labels"] == {"team": "payments"}
    plain = {**body, "name": "plain", "target": "python:app.jobs:plain"}
    assert api.call("POST", JOBS, json=plain).json()["labels"] == {}
    bad = api.call("POST", JOBS, json={**body, "name": "bad", "labels": {"bad key": "x"}})
    assert bad.status_code == 400 and bad.json()["code"] == "X400007REQINV"
    assert api.call("GET", f"{JOBS}/billing/bad").status_code == 404

    def selected(text: str) -> list[str]:
        answer = api.call("GET", JOBS, params={"selector": text}, role=Role.VIEWER)
        assert answer.status_code == 200, answer.text
        return [j["name"] for j in answer.json()["items"]]

    assert selected("team=payments") == ["pay"]
    assert selected("!team") == ["plain"]
    patched = api.call("PATCH", f"{JOBS}/billing/plain", json={"labels": {"team": "ops"}})
    assert patched.status_code == 200 and patched.json()["labels"] == {"team": "ops"}
    assert selected("team in (ops,payments)") == ["pay", "plain"]
    refused = api.call("PATCH", f"{JOBS}/billing/plain", json={"labels": {"team": "a b"}})
    assert refused.status_code == 400 and refused.json()["code"] == "X400007REQINV"
    assert api.call("GET", f"{JOBS}/billing/plain").json()["labels"] == {"team": "ops"}
    malformed = api.call("GET", JOBS, params={"selector": "team in ("})
    assert malformed.status_code == 400 and malformed.json()["detail"]["field"] == "selector"

    schemas = api.call("GET", "/openapi.json").json()["components"]["schemas"]
    for name in ("JobCreate", "JobPatchBody"):
        labels = schemas[name]["properties"]["labels"]
        (described,) = [s for s in labels.get("anyOf", [labels]) if s.get("type") == "object"]
        assert described["propertyNames"] == {"pattern": KEY_REGEX}, name
    assert "labels" in schemas["JobOut"]["required"]


@pytest.fixture
def served(database: Database) -> Iterator[tuple[str, str]]:
    api = make_api(database)
    token = api.token("acme", Role.ADMIN)
    with serving(database) as url:
        yield url, token


def test_the_client_sets_and_selects_job_labels(served: tuple[str, str]) -> None:
    url, token = served
    with Client(url, token, tenant="acme", stack="billing") as client:
        made = client.jobs.register("pay", "python:app.jobs:pay", labels={"team": "payments"})
        assert made.labels == {"team": "payments"}
        client.jobs.register("plain", "python:app.jobs:plain")
        assert [j.name for j in client.jobs.list(selector="team=payments")] == ["pay"]
        assert client.jobs.update("plain", labels={"tier": "batch"}).labels == {"tier": "batch"}
        assert [j.name for j in client.jobs.list(selector="tier")] == ["plain"]
        with pytest.raises(InvalidRequest):
            client.jobs.list(selector="team in (")
