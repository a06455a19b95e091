"""The alert routes over HTTP: coded refusals that change nothing, secrets never answered."""

from __future__ import annotations

import uuid

from api_support import make_api
from sqlalchemy import select

from cronplane.core.access import Role
from cronplane.store.database import Database
from cronplane.store.tables import alert_channels, alert_rules, events
from cronplane.targets.webhook import SecretKeyring

SEALED = SecretKeyring(b"api-alert-tests-key-0123456789").seal("https://hooks.slack.com/T/B/X")


def test_channels_and_rules_through_the_api(database: Database) -> None:
    api = make_api(database)
    clear = api.call(
        "POST",
        "/tenants/acme/alert-channels",
        json={"name": "slack", "kind": "slack", "secret": "https://hooks.slack.com/T/B/X"},
    )
    assert clear.status_code == 400 and clear.json()["code"] == "X400314CHNINV"
    assert "hooks.slack.com" not in clear.text
    made = api.call(
        "POST", "/tenants/acme/alert-channels",
        json={"name": "slack", "kind": "slack", "secret": SEALED},
    )  # fmt: skip
    assert made.status_code == 201 and made.json()["secret"] == "set"
    for role in Role:
        listed = api.call("GET", "/tenants/acme/alert-channels", role=role)
        assert listed.status_code == 200 and SEALED not in listed.text
        assert [c["secret"] for c in listed.json()["items"]] == ["set"]

    bad = api.call(
        "POST", "/tenants/acme/alert-rules",
        json={"name": "slow", "condition": "late", "channels": ["slack"]},
    )  # fmt: skip
    assert bad.status_code == 400 and bad.json()["code"] == "X400310ALRINV"
    assert bad.json()["detail"]["field"] == "threshold"
    body = {"name": "slow", "condition": "late", "threshold": 300, "channels": ["slack"]}
    assert api.call("POST", "/tenants/acme/alert-rules", json=body).status_code == 201
    again = api.call("POST", "/tenants/acme/alert-rules", json=body)
    assert again.status_code == 409 and again.json()["code"] == "X409312ALRDPL"
    used = api.call("DELETE", "/tenants/acme/alert-channels/slack")
    assert used.status_code == 400 and used.json()["detail"]["rules"] == ["slow"]
    limit = {"name": "held", "condition": "skipped", "threshold": 3600, "channels": ["slack"]}
    mixed = api.call("POST", "/tenants/acme/alert-rules", json={**limit, "reasons": ["overlap"]})
    assert mixed.status_code == 400 and mixed.json()["detail"]["field"] == "threshold"
    made = api.call("POST", "/tenants/acme/alert-rules", json={**limit, "reasons": ["paused"]})
    assert made.status_code == 201
    assert (made.json()["reasons"], made.json()["threshold"]) == (["paused"], 3600)
    assert api.call("DELETE", "/tenants/acme/alert-rules/held").status_code == 200
    ack = api.call("POST", f"/tenants/acme/alerts/{uuid.uuid4()}/ack")
    assert ack.status_code == 404 and ack.json()["code"] == "X404313ALTNFD"
    assert api.call("GET", "/tenants/acme/alerts?status=open").json() == {"items": []}

    with database.read() as conn:
        assert len(conn.execute(select(alert_rules)).all()) == 1
        assert len(conn.execute(select(alert_channels)).all()) == 1
        ledger = " ".join(str(tuple(row)) for row in conn.execute(select(events)))
    assert "hooks.slack.com" not in ledger and SEALED not in ledger
