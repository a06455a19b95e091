"""Schedule versions over real HTTP (issue 38), on SQLite and PostgreSQL: the routes,
their refusals, and how each change is stamped (`api`, `console`, a reason)."""

from __future__ import annotations

from api_support import Api

ROW = "/tenants/acme/schedules/billing/prod/acme-nightly"


def test_versions_diff_rollback_restore(seeded: Api) -> None:
    edited = seeded.call(
        "PATCH", ROW, json={"cron": "0 5 * * *"}, headers={"X-Cronplane-Reason": "ticket 9"}
    )
    assert edited.status_code == 200, edited.text
    listed = seeded.call("GET", ROW + "/versions").json()
    assert [v["number"] for v in listed["items"]] == [2, 1] and listed["next_before"] is None
    latest = listed["items"][0]
    assert (latest["via"], latest["reason"], latest["definition"]["cron"]) == (
        "api", "ticket 9", "0 5 * * *"
    )  # fmt: skip
    assert latest["actor"] != "seed" and listed["items"][1]["actor"] == "seed"
    page = seeded.call("GET", ROW + "/versions", params={"limit": 1}).json()
    assert page["next_before"] == 2
    one = seeded.call("GET", ROW + "/versions/1").json()
    assert one["definition"]["cron"] == "30 2 * * *"

    shown = seeded.call("GET", ROW + "/diff").json()
    assert [c["field"] for c in shown["changes"]] == ["cron"]
    assert shown["before"]["number"] == 1 and shown["after"]["number"] == 2
    assert [len(runs) for runs in shown["runs"]] == [5, 5]

    etag = edited.headers["etag"]
    dry = seeded.call("POST", ROW + "/rollback", json={"to": 1, "dry_run": True})
    assert dry.status_code == 200 and dry.json()["schedule"]["cron"] == "30 2 * * *"
    assert len(seeded.call("GET", ROW + "/versions").json()["items"]) == 2
    stale = seeded.call("POST", ROW + "/rollback", json={"to": 1}, headers={"If-Match": '"1"'})
    assert stale.status_code == 412
    done = seeded.call(
        "POST", ROW + "/rollback", json={"to": 1, "reason": "revert"}, headers={"If-Match": etag}
    )
    assert done.status_code == 200, done.text
    assert done.json()["schedule"]["cron"] == "30 2 * * *" and done.headers["etag"] == '"3"'
    latest = seeded.call("GET", ROW + "/versions").json()["items"][0]
    assert (latest["number"], latest["via"], latest["reason"]) == (3, "rollback", "revert")

    assert seeded.call("POST", ROW + "/restore").json()["code"] == "X409381RSTDPL"
    assert seeded.call("DELETE", ROW).status_code in (200, 204)
    assert seeded.call("GET", ROW + "/versions").status_code == 404
    restored = seeded.call("POST", ROW + "/restore", json={"reason": "oops"})
    assert restored.status_code == 201, restored.text
    assert restored.json()["cron"] == "30 2 * * *"
    numbers = [v["number"] for v in seeded.call("GET", ROW + "/versions").json()["items"]]
    assert numbers == [5, 4, 3, 2, 1]


def test_refusals_are_coded_and_change_nothing(seeded: Api) -> None:
    unknown = seeded.call("POST", ROW + "/rollback", json={"to": 7})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "X404380VERNFD")
    assert seeded.call("GET", ROW + "/versions/7").json()["code"] == "X404380VERNFD"
    bad = seeded.call("POST", ROW + "/rollback", json={"to": 0})
    assert bad.status_code == 400
    nothing = seeded.call("POST", "/tenants/acme/schedules/billing/prod/never/restore")
    assert (nothing.status_code, nothing.json()["code"]) == (404, "X404381RSTNON")
    # Another tenant's row is not found, and its versions are not read.
    other = seeded.call("GET", "/tenants/acme/schedules/billing/prod/globex-nightly/versions")
    assert other.status_code == 404
    assert len(seeded.call("GET", ROW + "/versions").json()["items"]) == 1


def test_each_request_is_stamped_with_how_it_came() -> None:
    """api.origin: console pages are `console`, API routes `api` (or `cli` when the remote
    CLI says so), the reason header travels; a sync route's worker thread sees it."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from cronplane.api.origin import ChangeOrigin
    from cronplane.service.base import HOW

    app = FastAPI()

    @app.get("/{path:path}")
    def seen(path: str) -> dict[str, object]:  # sync: run in a worker thread
        how = HOW.get()
        return {"via": None if how is None else how.via, "reason": how and how.reason}

    app.add_middleware(ChangeOrigin)
    client = TestClient(app)
    assert client.get("/schedules/billing/prod/x").json() == {"via": "console", "reason": None}
    assert client.get("/api/v1/x").json() == {"via": "api", "reason": None}
    cli = client.get("/api/v1/x", headers={"X-Cronplane-Via": "cli", "X-Cronplane-Reason": "r"})
    assert cli.json() == {"via": "cli", "reason": "r"}
    assert HOW.get() is None
