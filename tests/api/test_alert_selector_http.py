"""Alert rules scoped by a label selector over HTTP (issue 37): the route stores the
canonical selector, refuses a bad one with X400310ALRINV naming the field and stores
nothing; the OpenAPI document describes the field; the client's `add_rule(selector=)`
over a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_support import make_api
from live_server import serving
from sqlalchemy import func, select

from cronplane.client import Client
from cronplane.core.access import Role
from cronplane.core.selectors import REQUIREMENTS_REGEX
from cronplane.errors import InvalidAlertRule
from cronplane.store.database import Database
from cronplane.store.tables import alert_rules

MAIL = {"host": "127.0.0.1", "port": 9, "sender": "cron@example.com", "to": ["o@example.com"]}


def rule_count(database: Database) -> int:
    with database.read() as conn:
        return int(conn.execute(select(func.count()).select_from(alert_rules)).scalar_one())


def test_a_selector_rule_through_the_api(database: Database) -> None:
    api = make_api(database)
    made = api.call(
        "POST",
        "/tenants/acme/alert-channels",
        json={"name": "ops", "kind": "email", "config": MAIL},
    )
    assert made.status_code == 201, made.text
    body = {"name": "pay", "condition": "failed", "channels": ["ops"], "scope": "selector"}
    for selector, where in [
        ("team in (payments", "selector"),
        ("tier>1", "selector"),
        ("", "selector"),
        (None, "selector"),
    ]:
        bad = api.call("POST", "/tenants/acme/alert-rules", json={**body, "selector": selector})
        assert bad.status_code == 400 and bad.json()["code"] == "X400310ALRINV", bad.text
        assert bad.json()["detail"]["field"] == where
    tenant_wide = {**body, "scope": "tenant", "selector": "team=payments"}
    bad = api.call("POST", "/tenants/acme/alert-rules", json=tenant_wide)
    assert bad.status_code == 400 and bad.json()["detail"]["field"] == "selector"
    assert rule_count(database) == 0  # nothing stored

    good = api.call(
        "POST",
        "/tenants/acme/alert-rules",
        json={**body, "selector": " tier != batch , team==payments"},
    )
    assert good.status_code == 201, good.text
    assert (good.json()["scope"], good.json()["selector"]) == (
        "selector",
        "team=payments,tier!=batch",
    )
    listed = api.call("GET", "/tenants/acme/alert-rules", role=Role.VIEWER).json()["items"]
    assert [(r["name"], r["selector"]) for r in listed] == [("pay", "team=payments,tier!=batch")]

    document = api.call("GET", "/openapi.json").json()
    schemas = document["components"]["schemas"]
    create = schemas["RuleCreate"]["properties"]
    assert "selector" in create["scope"]["enum"]
    assert create["selector"]["pattern"] == REQUIREMENTS_REGEX  # a string's (null passes)
    assert "selector" in schemas["RuleOut"]["properties"]


@pytest.fixture
def served(database: Database) -> Iterator[str]:
    api = make_api(database)
    token = api.token("acme", Role.ADMIN)
    with serving(database) as url:
        yield f"{url}|{token}"


def test_the_client_adds_a_selector_rule(served: str) -> None:
    url, token = served.split("|")
    with Client(url, token, tenant="acme") as client:
        client.alerts.add_channel("ops", "email", MAIL)
        rule = client.alerts.add_rule("pay", "failed", selector="team=payments", channels=["ops"])
        assert (rule.scope, rule.selector) == ("selector", "team=payments")
        with pytest.raises(InvalidAlertRule) as refused:
            client.alerts.add_rule("bad", "failed", selector="team in (", channels=["ops"])
        assert refused.value.detail["field"] == "selector"
        assert [(r.name, r.selector) for r in client.alerts.rules()] == [("pay", "team=payments")]
