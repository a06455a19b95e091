"""Labels over real HTTP (issue 37), on SQLite and PostgreSQL: set on create and patch,
refused naming the label, declared by a manifest (the app's labels under each cron's
own), kept by sync as an operator's override, and a second install writes nothing."""

from __future__ import annotations

from api_support import Api

S = "/tenants/acme/schedules"
MANIFEST = {
    "name": "payments",
    "labels": {"team": "payments", "tier": "batch"},
    "jobs": {"settle": {"target": "python:billing.jobs:settle"}},
    "crons": {
        "settle": {"cron": "0 2 * * *", "labels": {"tier": "critical", "region": "eu-west"}},
        "sweep": {"cron": "0 3 * * *", "job": "settle"},
    },
}


def test_a_schedule_carries_labels_and_a_bad_one_is_named(seeded: Api) -> None:
    body = {"job": "report", "cron": "0 2 * * *", "name": "lab", "stack": "billing"}
    created = seeded.call("POST", S, json={**body, "labels": {"team": "payments"}})
    assert created.status_code == 201, created.text
    assert created.json()["labels"] == {"team": "payments"}
    row = S + "/billing/default/lab"
    patched = seeded.call("PATCH", row, json={"labels": {"team": "ops", "env": "prod"}})
    assert patched.json()["labels"] == {"env": "prod", "team": "ops"}
    refused = seeded.call("PATCH", row, json={"labels": {"team": "ops", "bad key": "x"}})
    assert refused.status_code == 400 and refused.json()["code"] == "X400007REQINV"
    assert refused.json()["detail"]["label"] == "bad key"
    assert seeded.call("GET", row).json()["labels"] == {"env": "prod", "team": "ops"}
    plain = seeded.call("POST", S, json={**body, "name": "plain"})
    assert plain.json()["labels"] == {}


def test_a_manifest_labels_its_crons_and_sync_keeps_an_override(seeded: Api) -> None:
    installed = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST})
    assert installed.status_code == 200, installed.text
    settle = seeded.call("GET", S + "/payments/default/settle").json()
    sweep = seeded.call("GET", S + "/payments/default/sweep").json()
    assert settle["labels"] == {"region": "eu-west", "team": "payments", "tier": "critical"}
    assert sweep["labels"] == {"team": "payments", "tier": "batch"}
    again = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST}).json()
    assert again["plan"]["updated"] == [] and sorted(again["plan"]["unchanged"]) == [
        "settle",
        "sweep",
    ]
    override = {"labels": {"team": "payments", "tier": "paused-for-migration"}}
    assert seeded.call("PATCH", S + "/payments/default/sweep", json=override).status_code == 200
    third = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST}).json()
    assert any(d["name"] == "sweep" and d["field"] == "labels" for d in third["plan"]["drift"])
    kept = seeded.call("GET", S + "/payments/default/sweep").json()
    assert kept["labels"]["tier"] == "paused-for-migration" and "labels" in kept["overrides"]
