"""The DST policy over real HTTP (issue 36), on SQLite and PostgreSQL: set on create and
patch, answered on the row, tried in `cron/explain` with the notes of the year's clock
changes, and declared by a manifest as `dst: {gap, repeat}`.

Europe/London in 2026: 01:00-01:59 skipped on 29 March, repeated on 25 October.
"""

from __future__ import annotations

from api_support import Api

S = "/tenants/acme/schedules"
ROW = S + "/billing/default/payroll"


def test_a_schedule_takes_a_policy_and_its_preview_follows_it(seeded: Api) -> None:
    created = seeded.call(
        "POST",
        S,
        json={
            "job": "report",
            "cron": "30 1 * * *",
            "name": "payroll",
            "stack": "billing",
            "timezone": "Europe/London",
            "dst_repeat": "second",
        },
    )
    assert created.status_code == 201, created.text
    assert (created.json()["dst_gap"], created.json()["dst_repeat"]) == ("shift", "second")
    after = {"after": "2026-10-24T12:00:00Z", "count": 2}
    preview = seeded.call("GET", ROW + "/preview", params=after).json()
    assert preview["next"] == ["2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"]  # 01:30 GMT
    assert any("runs on the second pass (dst repeat: second)" in n for n in preview["notes"])

    patched = seeded.call("PATCH", ROW, json={"dst_repeat": None, "dst_gap": "skip"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["dst_gap"], patched.json()["dst_repeat"]) == ("skip", None)
    preview = seeded.call("GET", ROW + "/preview", params=after).json()
    assert preview["next"] == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]  # 01:30 BST
    assert any("does not run then that day (dst gap: skip)" in n for n in preview["notes"])


def test_a_bad_policy_is_refused_with_a_code_and_changes_nothing(seeded: Api) -> None:
    before = seeded.call("GET", S + "/billing/prod/acme-nightly").json()
    refused = seeded.call(
        "PATCH", S + "/billing/prod/acme-nightly", json={"dst_repeat": "sideways"}
    )
    assert refused.status_code in (400, 422), refused.text
    assert refused.json()["code"].startswith("X4")
    assert seeded.call("GET", S + "/billing/prod/acme-nightly").json() == before


def test_explain_tries_a_policy_before_it_is_saved(seeded: Api) -> None:
    body = {
        "expression": "30 1 * * *",
        "timezone": "Europe/London",
        "after": "2026-10-24T12:00:00Z",
        "count": 3,
        "dst_repeat": "both",
    }
    explained = seeded.call("POST", "/cron/explain", json=body).json()
    assert explained["next"] == [
        "2026-10-25T00:30:00Z",
        "2026-10-25T01:30:00Z",
        "2026-10-26T01:30:00Z",
    ]
    assert explained["notes"] == [
        "01:30 happens twice on 2026-10-25 in Europe/London (BST, then GMT); "
        "this schedule runs on both passes (dst repeat: both)",
        "01:30 does not exist on 2027-03-28 in Europe/London; "
        "this schedule runs at 02:00 that day (dst gap: shift)",
    ]
    queried = seeded.call(
        "GET",
        "/cron/explain",
        params={k: v for k, v in body.items() if k != "after"} | {"after": body["after"]},
    ).json()
    assert queried["next"] == explained["next"] and queried["notes"] == explained["notes"]
    utc = seeded.call("POST", "/cron/explain", json={"expression": "30 1 * * *"}).json()
    assert utc["notes"] == []
    later = dict(body, dst_gap="later", dst_repeat="first", after="2027-03-27T12:00:00Z")
    moved = seeded.call("POST", "/cron/explain", json=later).json()
    assert moved["next"][0] == "2027-03-28T01:30:00Z"  # 02:30 BST, as beat reads 01:30
    assert moved["notes"][0] == (
        "01:30 does not exist on 2027-03-28 in Europe/London; "
        "this schedule runs at 02:30 that day (dst gap: later)"
    )


def test_a_manifest_declares_the_policy_and_a_second_sync_writes_nothing(seeded: Api) -> None:
    manifest = {
        "name": "payroll",
        "jobs": {"close": {"target": "python:billing.jobs:close"}},
        "crons": {
            "close": {
                "cron": "30 1 * * *",
                "timezone": "Europe/London",
                "dst": {"gap": "skip", "repeat": "first"},
            }
        },
    }
    first = seeded.call("POST", "/tenants/acme/apps", json={"manifest": manifest})
    assert first.status_code == 200, first.text
    row = seeded.call("GET", S + "/payroll/default/close").json()
    assert (row["dst_gap"], row["dst_repeat"]) == ("skip", "first")
    again = seeded.call("POST", "/tenants/acme/apps", json={"manifest": manifest}).json()
    assert again["plan"]["unchanged"] == ["close"] and again["plan"]["updated"] == []
    bad = dict(manifest, crons={"close": {"cron": "30 1 * * *", "dst": {"gap": "sideways"}}})
    refused = seeded.call("POST", "/tenants/acme/apps", json={"manifest": bad})
    assert refused.status_code == 400 and "dst_gap" in refused.text
