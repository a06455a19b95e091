"""Tenant routes and quota refusals over HTTP (issue 18): platform tokens only (a tenant's
token gets 403, whichever tenant it names); PUT replaces a tenant's limits, PATCH changes
those given; a refusal is 403 or 429 with its code, the limit and its value."""

from __future__ import annotations

import json

from api_support import Api, seed_tenant
from live_server import serving
from test_serve import cronplane

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.service import ScheduleService
from cronplane.store.database import Database

S = "/tenants/acme/schedules"


def test_platform_tokens_read_and_set_quotas(api: Api) -> None:
    seed_tenant(api.service, "acme")
    seed_tenant(api.service, "globex")
    listed = api.call("GET", "/tenants", tenant=None, role=Role.VIEWER)
    assert listed.status_code == 200, listed.text
    rows = {row["tenant"]: row for row in listed.json()["items"]}
    assert set(rows) == {"acme", "globex"}
    assert rows["acme"]["usage"] == {"schedules": 1, "jobs": 1, "fires_last_hour": 0, "queued": 0}

    put = api.call(
        "PUT", "/tenants/acme/quota", tenant=None, json={"max_schedules": 1, "max_queued": 3}
    )
    assert put.status_code == 200, put.text
    assert put.json()["overrides"] == ["max_queued", "max_schedules"]
    patched = api.call(
        "PATCH", "/tenants/acme/quota", tenant=None, json={"max_queued": None, "max_jobs": 4}
    )
    assert patched.json()["overrides"] == ["max_jobs", "max_schedules"]
    # PUT replaces: what it leaves out returns to the platform's default.
    replaced = api.call("PUT", "/tenants/acme/quota", tenant=None, json={"max_schedules": 1})
    assert replaced.json()["overrides"] == ["max_schedules"]
    shown = api.call("GET", "/tenants/acme", tenant=None, role=Role.VIEWER).json()
    assert shown["quota"]["max_schedules"] == 1 and shown["quota"]["max_jobs"] is None

    refused = api.call(
        "POST", S, json={"job": "report", "cron": "@daily", "name": "two", "stack": "billing"}
    )
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert body["code"] == "X403260QTASCH"
    assert body["detail"]["limit"] == "max_schedules" and body["detail"]["value"] == 1


def test_tenant_tokens_get_403_and_viewers_cannot_set(api: Api) -> None:
    seed_tenant(api.service, "acme")
    for role in Role:
        for method, path in (
            ("GET", "/tenants"),
            ("GET", "/tenants/acme"),
            ("GET", "/tenants/globex"),
            ("PATCH", "/tenants/acme/quota"),
        ):
            answer = api.call(method, path, tenant="acme", role=role, json={"max_jobs": 1})
            assert answer.status_code == 403, (method, path, role, answer.text)
            assert answer.json()["code"] == "X403001FORBID"
    for role in (Role.VIEWER, Role.OPERATOR, Role.EDITOR):
        answer = api.call("PATCH", "/tenants/acme/quota", tenant=None, role=role, json={})
        assert answer.status_code == 403
    assert api.service.tenant_usage("acme").to_dict()["overrides"] == []


def test_bad_quota_bodies_are_400(api: Api) -> None:
    for body in ({"max_jobs": -1}, {"max_jobs": "ten"}, {"max_bananas": 1}, {"min_interval": 0}):
        answer = api.call("PATCH", "/tenants/acme/quota", tenant=None, json=body)
        assert answer.status_code == 400, (body, answer.text)


def test_run_now_past_max_queued_is_429(api: Api) -> None:
    seed_tenant(api.service, "acme")
    api.call("PATCH", "/tenants/acme/quota", tenant=None, json={"max_queued": 1})
    run = S + "/billing/prod/acme-nightly/run"
    assert api.call("POST", run).status_code == 202
    refused = api.call("POST", run)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "X429260QTAQUE"
    assert refused.json()["detail"]["value"] == 1


def test_the_cli_through_a_server_needs_a_platform_token(database: Database) -> None:
    clock = SystemClock()
    service = ScheduleService(database, clock)
    seed_tenant(service, "acme")
    tenant_token = service.tokens.create(tenant="acme", role="admin", actor="t").secret
    platform = service.tokens.create(tenant=None, role="admin", actor="t").secret
    with serving(database) as url:
        env = {"CRONPLANE_URL": url, "CRONPLANE_DATABASE_URL": "sqlite:////nonexistent/x.db"}
        refused = cronplane("tenant", "ls", env={**env, "CRONPLANE_TOKEN": tenant_token})
        assert refused.returncode == 6 and refused.stderr.startswith("X403001FORBID")
        assert "only a platform token may see tenants and their usage" in refused.stderr
        platform_env = {**env, "CRONPLANE_TOKEN": platform}
        made = cronplane("tenant", "set-quota", "acme", "--max-queued", "1", env=platform_env)
        assert made.returncode == 0, made.stderr
        shown = cronplane("tenant", "show", "acme", "--json", env=platform_env)
        assert json.loads(shown.stdout)["quota"]["max_queued"] == 1
        run = ("schedule", "run", "acme-nightly", "--stack", "billing", "--env", "prod")
        tenant_env = {**env, "CRONPLANE_TOKEN": tenant_token, "CRONPLANE_TENANT": "acme"}
        assert cronplane(*run, env=tenant_env).returncode == 0
        again = cronplane(*run, env=tenant_env)
        assert again.returncode == 9 and again.stderr.startswith("X429260QTAQUE"), again.stderr
