"""The API's frame: health, readiness, metrics, OpenAPI, coded errors, limits."""

from __future__ import annotations

import pytest
from api_support import V1, Api, make_api
from fastapi.testclient import TestClient

from cronplane.api.app import create_app
from cronplane.api.auth import inventory
from cronplane.api.context import Limits
from cronplane.api.limits import json_depth
from cronplane.store.database import Database


def test_healthz_and_readyz(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok", "checks": {"process": "ok"}}
    ready = api.client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"] == {"database": "ok", "migrations": "ok"}


def test_readyz_refuses_a_database_behind_its_migrations(tmp_path: object) -> None:
    database = Database(f"sqlite:///{tmp_path}/empty.db")  # never migrated
    api = make_api(database)
    answer = api.client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["code"] == "X503001DBDOWN"
    assert "migrations" in answer.json()["detail"]["checks"]


def test_metrics_expose_the_product_series_without_tenants(seeded: Api) -> None:
    seeded.call("GET", "/tenants/acme/schedules")
    text = seeded.client.get("/metrics").text
    for series in (
        "cronplane_fires_total",
        "cronplane_skips_total",
        "cronplane_fire_lateness_seconds_bucket",
        "cronplane_leader ",
        "cronplane_leader_term",
        "cronplane_shards_led",
        "cronplane_worker_outcomes_total",
        "cronplane_http_requests_total",
        "cronplane_due_backlog",
        'cronplane_queue_items{status="queued"}',
        "cronplane_database_up 1.0",
    ):
        assert series in text, series
    assert 'route="/api/v1/tenants/{tenant}/schedules"' in text
    # Tenant names only in the per-tenant series (issue 18), never in the installation's.
    named = [line for line in text.splitlines() if "acme" in line or "globex" in line]
    assert all(line.startswith("cronplane_tenant_") for line in named), named


def _requests_counted(text: str, route: str, status: int) -> float:
    prefix = f'cronplane_http_requests_total{{method="GET",route="{route}",status="{status}"}} '
    return sum(float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix))


def test_metrics_count_every_request_of_a_route(seeded: Api) -> None:
    route = "/api/v1/tenants/{tenant}/schedules"
    before = _requests_counted(seeded.client.get("/metrics").text, route, 200)
    for _ in range(3):
        assert seeded.call("GET", "/tenants/acme/schedules").status_code == 200
    assert seeded.call("GET", "/tenants/acme/schedules", tenant="globex").status_code == 404
    text = seeded.client.get("/metrics").text
    assert _requests_counted(text, route, 200) == before + 3
    assert _requests_counted(text, route, 404) >= 1


def test_openapi_and_docs_are_served(api: Api) -> None:
    document = api.client.get(f"{V1}/openapi.json").json()
    assert document["info"]["title"] == "cronplane"
    assert f"{V1}/tenants/{{tenant}}/schedules" in document["paths"]
    assert "/api/method/shc.schedule.sync" in document["paths"]
    assert document["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
    assert api.client.get("/api/docs").status_code == 200


def test_every_route_declares_an_access_rule(api: Api) -> None:
    entries = inventory(api.app)
    assert len(entries) > 20
    assert all(entry.rule is not None for entry in entries)


def test_unknown_route_and_method_are_coded(api: Api) -> None:
    missing = api.client.get("/api/v1/nothing-here")
    assert (missing.status_code, missing.json()["code"]) == (404, "X404001NOROUT")
    wrong = api.client.put("/healthz")
    assert (wrong.status_code, wrong.json()["code"]) == (405, "X405001METHOD")


def test_no_token_is_401_with_a_challenge(seeded: Api) -> None:
    answer = seeded.client.get(f"{V1}/tenants/acme/schedules")
    assert answer.status_code == 401
    assert answer.json()["code"] == "X401001AUTHRQ"
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    bad = seeded.client.get(
        f"{V1}/tenants/acme/schedules", headers={"Authorization": "Bearer cpt_nope"}
    )
    assert bad.status_code == 401
    basic = seeded.client.get(f"{V1}/tenants/acme/schedules", headers={"Authorization": "Basic x"})
    assert basic.status_code == 401


def test_validation_errors_are_400_coded_never_422(seeded: Api) -> None:
    answer = seeded.call("POST", "/tenants/acme/schedules", json={"job": "report"})
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["code"] == "X400007REQINV"
    assert body["detail"]["problems"][0]["loc"] == "body.cron"
    extra = seeded.call(
        "POST", "/tenants/acme/schedules", json={"job": "report", "cron": "@daily", "evil": 1}
    )
    assert (extra.status_code, extra.json()["code"]) == (400, "X400007REQINV")
    not_json = seeded.call(
        "POST",
        "/tenants/acme/schedules",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert (not_json.status_code, not_json.json()["code"]) == (400, "X400007REQINV")
    query = seeded.call("GET", "/tenants/acme/schedules?limit=0")
    assert (query.status_code, query.json()["code"]) == (400, "X400007REQINV")


def test_body_over_the_limit_is_413(database: Database) -> None:
    api = make_api(database)
    small = create_app(database, api.clock, limits=Limits(max_body_bytes=1000))
    client = TestClient(small)
    headers = api.headers("acme")
    big = {"job": "report", "cron": "@daily", "payload": {"x": "y" * 2000}}
    answer = client.post(f"{V1}/tenants/acme/schedules", json=big, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (413, "X413001TOOBIG")

    def chunks():  # no Content-Length: counted as it streams
        for _ in range(5):
            yield b" " * 400

    streamed = client.post(
        f"{V1}/tenants/acme/schedules",
        content=chunks(),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert (streamed.status_code, streamed.json()["code"]) == (413, "X413001TOOBIG")


def test_deep_json_is_refused_before_parsing(seeded: Api) -> None:
    deep = (
        b'{"job": "report", "cron": "@daily", "payload": {"a": '
        + b"[" * 50_000
        + b"]" * 50_000
        + b"}}"
    )
    answer = seeded.call(
        "POST",
        "/tenants/acme/schedules",
        content=deep,
        headers={"Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (400, "X400007REQINV")
    assert "nested deeper" in answer.json()["message"]


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        (b"[[[]]]", 0),  # no more brackets than the limit: cannot be deeper, not scanned
        (b"[" * 10 + b"]" * 10, 4),  # stops as soon as it is over the limit
        (b'[{"a": []}, [], [[]], {"b": "x"}]', 3),
        (b'["' + b"[" * 10 + b'"]', 1),  # brackets in strings do not count
        (b'["\\"' + b"[" * 10 + b'"]', 1),  # nor after an escaped quote
    ],
)
def test_json_depth(body: bytes, depth: int) -> None:
    assert json_depth(body, limit=3) == depth


def test_whoami(api: Api) -> None:
    answer = api.call("GET", "/whoami", tenant="acme", role="operator")
    assert answer.json()["tenant"] == "acme"
    assert answer.json()["permissions"] == ["READ", "RUN", "TOGGLE"]
    platform = api.call("GET", "/whoami", tenant=None, role="admin")
    assert platform.json()["tenant"] is None
