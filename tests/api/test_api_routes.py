"""The routes do what the service does, over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

from api_support import Api

S = "/tenants/acme/schedules"
ROW = S + "/billing/prod/acme-nightly"


def test_create_get_list_and_etag(seeded: Api) -> None:
    created = seeded.call(
        "POST",
        S,
        json={
            "job": "report",
            "cron": "every 15 minutes",
            "name": "quarter",
            "stack": "billing",
            "environment": "prod",
            "payload": {"kind": "weekly"},
        },
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["cron"] == "*/15 * * * *"
    assert body["source"] == "user" and body["revision"] == 1
    assert created.headers["ETag"] == '"1"'
    assert created.headers["Location"].endswith("/schedules/billing/prod/quarter")
    got = seeded.call("GET", S + "/billing/prod/quarter")
    assert got.json() == body
    listed = seeded.call("GET", S, params={"stack": "billing", "environment": "prod"}).json()
    assert [row["name"] for row in listed["items"]] == ["acme-nightly", "quarter"]
    assert listed["next_cursor"] is None


def test_list_pages_with_a_cursor_and_filters(seeded: Api) -> None:
    for n in range(5):
        seeded.call(
            "POST",
            S,
            json={"job": "report", "cron": "@daily", "name": f"p{n}", "stack": "billing"},
        )
    names: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = seeded.call("GET", S, params=params).json()
        names += [row["name"] for row in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert names == ["acme-nightly", "p0", "p1", "p2", "p3", "p4"]
    only_prod = seeded.call("GET", S, params={"environment": "prod"}).json()["items"]
    assert [row["name"] for row in only_prod] == ["acme-nightly"]
    bad = seeded.call("GET", S, params={"cursor": "!!garbage"})
    assert (bad.status_code, bad.json()["code"]) == (400, "X400007REQINV")
    searched = seeded.call("GET", S, params={"search": "P3"}).json()["items"]
    assert [row["name"] for row in searched] == ["p3"]
    too_long = seeded.call("GET", S, params={"search": "x" * 129})
    assert (too_long.status_code, too_long.json()["code"]) == (400, "X400007REQINV")


def test_service_errors_keep_their_codes(seeded: Api) -> None:
    def create(**fields: object) -> tuple[int, str]:
        body = {"job": "report", "cron": "@daily", "stack": "billing", **fields}
        answer = seeded.call("POST", S, json=body)
        return answer.status_code, answer.json()["code"]

    assert create(cron="61 * * * *") == (400, "X400001CRNINV")
    assert create(timezone="Mars/Olympus") == (400, "X400004ZONINV")
    assert create(name="no spaces") == (400, "X400005NAMINV")
    assert create(job="ghost") == (404, "X404903JOBNFD")
    deep: object = 1
    for _ in range(34):
        deep = [deep]
    assert create(payload={"a": deep}) == (400, "X400002PAYINV")
    first = seeded.call(
        "POST", S, json={"job": "report", "cron": "@daily", "name": "dup", "stack": "billing"}
    )
    assert first.status_code == 201
    assert create(name="dup") == (409, "X409900SCHDPL")
    missing = seeded.call("GET", S + "/billing/prod/nothing")
    assert (missing.status_code, missing.json()["code"]) == (404, "X404902SCHNFD")


def test_update_with_if_match(seeded: Api) -> None:
    current = seeded.call("GET", ROW)
    etag = current.headers["ETag"]
    changed = seeded.call("PATCH", ROW, json={"cron": "at 04:15"}, headers={"If-Match": etag})
    assert changed.status_code == 200, changed.text
    assert changed.json()["cron"] == "15 4 * * *"
    assert changed.headers["ETag"] == '"2"'
    stale = seeded.call("PATCH", ROW, json={"cron": "@hourly"}, headers={"If-Match": etag})
    assert (stale.status_code, stale.json()["code"]) == (412, "X412001REVSTL")
    assert seeded.call("GET", ROW).json()["cron"] == "15 4 * * *"
    junk = seeded.call("PATCH", ROW, json={}, headers={"If-Match": "yesterday"})
    assert (junk.status_code, junk.json()["code"]) == (400, "X400007REQINV")
    grace = seeded.call("PATCH", ROW, json={"misfire_grace": 60})
    assert grace.json()["misfire_grace"] == 60
    cleared = seeded.call("PATCH", ROW, json={"misfire_grace": None})
    assert cleared.json()["misfire_grace"] is None


def test_enable_disable_remove_history_preview(seeded: Api) -> None:
    disabled = seeded.call("POST", ROW + "/disable").json()
    assert disabled["enabled"] is False and disabled["next_run"] is None
    enabled = seeded.call("POST", ROW + "/enable").json()
    assert enabled["enabled"] is True and enabled["next_run"] is not None
    preview = seeded.call("GET", ROW + "/preview", params={"count": 3}).json()
    assert preview["normalized"] == "30 2 * * *"
    assert preview["description"]
    assert len(preview["next"]) == 3
    history = seeded.call("GET", ROW + "/history").json()
    codes = [event["code"] for event in history["items"]]
    assert codes[:3] == ["V200004SCHENA", "V200005SCHDIS", "V201001SCHCRT"]
    assert history["items"][0]["actor"] == "token:acme-admin"
    removed = seeded.call("DELETE", ROW)
    assert removed.status_code == 200 and removed.json()["name"] == "acme-nightly"
    assert seeded.call("GET", ROW).status_code == 404


def test_run_now_and_queue_items(seeded: Api) -> None:
    run = seeded.call("POST", ROW + "/run")
    assert run.status_code == 202, run.text
    item = run.json()
    assert (item["source"], item["priority"], item["status"]) == ("manual", 5, "queued")
    listed = seeded.call("GET", "/tenants/acme/queue/items").json()["items"]
    assert [row["id"] for row in listed] == [item["id"]]
    got = seeded.call("GET", f"/tenants/acme/queue/items/{item['id']}")
    assert got.json()["id"] == item["id"]
    cancelled = seeded.call("POST", f"/tenants/acme/queue/items/{item['id']}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    again = seeded.call("POST", f"/tenants/acme/queue/items/{item['id']}/cancel")
    assert (again.status_code, again.json()["code"]) == (409, "X409200ITMFIN")
    # Another tenant's item id, asked about in one's own tenant: not found.
    theirs = seeded.call("GET", f"/tenants/globex/queue/items/{item['id']}", tenant="globex")
    assert (theirs.status_code, theirs.json()["code"]) == (404, "X404904ITMNFD")
    # The schedule's next_run is untouched by run-now.
    assert seeded.call("GET", ROW).json()["revision"] == 1


def test_jobs_routes(seeded: Api) -> None:
    made = seeded.call(
        "POST",
        "/tenants/acme/jobs",
        json={"name": "ship", "target": "webhook:https://example.com/x", "stack": "billing"},
    )
    assert made.status_code == 201, made.text
    assert made.json()["kind"] == "webhook"
    dup = seeded.call(
        "POST",
        "/tenants/acme/jobs",
        json={"name": "ship", "target": "python:a:b", "stack": "billing"},
    )
    assert (dup.status_code, dup.json()["code"]) == (409, "X409903JOBDPL")
    bad = seeded.call("POST", "/tenants/acme/jobs", json={"name": "t", "target": "ftp:x"})
    assert (bad.status_code, bad.json()["code"]) == (400, "X400008TGTINV")
    names = [job["name"] for job in seeded.call("GET", "/tenants/acme/jobs").json()["items"]]
    assert names == ["report", "ship"]
    patched = seeded.call("PATCH", "/tenants/acme/jobs/billing/ship", json={"title": "Ship it"})
    assert patched.json()["title"] == "Ship it" and patched.json()["revision"] == 2
    off = seeded.call("POST", "/tenants/acme/jobs/billing/ship/deactivate")
    assert off.json()["status"] == "inactive"
    inactive = seeded.call("POST", S, json={"job": "ship", "cron": "@daily", "stack": "billing"})
    assert (inactive.status_code, inactive.json()["code"]) == (409, "X409904JOBINA")


MANIFEST = {
    "name": "shop",
    "jobs": {"pack": {"title": "Pack orders", "target": "python:shop.jobs:pack"}},
    "crons": {"pack": "*/15 * * * *", "nightly": {"job": "pack", "cron": "at 02:30"}},
}


def test_apps_install_sync_dry_run_and_uninstall(seeded: Api) -> None:
    dry = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST, "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert dry.json()["plan"]["created"] == ["nightly", "pack"]
    assert seeded.call("GET", S, params={"stack": "shop"}).json()["items"] == []
    done = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST}).json()
    assert done["jobs_registered"] == ["pack"] and done["summary"]["created"] == 2
    again = seeded.call("POST", "/tenants/acme/apps", json={"manifest": MANIFEST}).json()
    assert again["summary"]["created"] == 0 and again["summary"]["unchanged"] == 2
    # An operator override survives a re-sync and is reported as drift.
    seeded.call("PATCH", S + "/shop/default/pack", json={"cron": "@hourly"})
    plan = seeded.call(
        "POST",
        "/tenants/acme/sync",
        json={"stack": "shop", "crons": MANIFEST["crons"], "dry_run": True},
    ).json()
    assert plan["dry_run"] is True
    assert plan["plan"]["drift"][0]["name"] == "pack"
    owned = seeded.call("DELETE", S + "/shop/default/pack")
    assert (owned.status_code, owned.json()["code"]) == (409, "X409902APPOWN")
    reset = seeded.call("POST", S + "/shop/default/pack/reset").json()
    assert reset["cron"] == "*/15 * * * *" and reset["overrides"] == []
    gone = seeded.call("DELETE", "/tenants/acme/apps/shop/default").json()
    assert sorted(gone["plan"]["removed"]) == ["nightly", "pack"]
    assert gone["jobs_deactivated"] == ["pack"]


def test_invalid_manifest_lists_problems(seeded: Api) -> None:
    broken = {"name": "shop", "crons": {"x": {"cron": "nope", "job": "x"}}}
    answer = seeded.call("POST", "/tenants/acme/apps", json={"manifest": broken})
    assert (answer.status_code, answer.json()["code"]) == (400, "X400006MANINV")
    assert answer.json()["detail"]["problems"]


def test_seed_sync_path(seeded: Api) -> None:
    body = {"stackName": "billing", "environment": "prod", "crons": {"report": "@hourly"}}
    answer = seeded.call("POST", "/api/method/shc.schedule.sync", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["message"]["plan"]["created"] == ["report"]
    row = seeded.call("GET", S + "/billing/prod/report").json()
    assert (row["source"], row["cron"]) == ("app", "0 * * * *")
    # A platform token must say which tenant.
    anonymous = seeded.call(
        "POST", "/api/method/shc.schedule.sync", json=body, tenant=None, role="admin"
    )
    assert (anonymous.status_code, anonymous.json()["code"]) == (400, "X400007REQINV")
    named = seeded.call(
        "POST",
        "/api/method/shc.schedule.sync",
        json={**body, "tenant": "globex"},
        tenant=None,
        role="admin",
    )
    assert named.json()["message"]["plan"]["created"] == ["report"]


def test_events_of_the_tenant_only(seeded: Api) -> None:
    events = seeded.call("GET", "/tenants/acme/events").json()
    assert events["items"]
    assert {event["tenant"] for event in events["items"]} == {"acme"}
    only = seeded.call("GET", "/tenants/acme/events", params={"code": "V201001SCHCRT"}).json()
    assert [event["schedule_name"] for event in only["items"]] == ["acme-nightly"]
    paged = seeded.call("GET", "/tenants/acme/events", params={"limit": 1}).json()
    older = seeded.call(
        "GET", "/tenants/acme/events", params={"limit": 1, "before": paged["next_before"]}
    ).json()
    assert older["items"][0]["id"] < paged["items"][0]["id"]


def test_cron_explain(seeded: Api) -> None:
    answer = seeded.call(
        "POST",
        "/cron/explain",
        json={"expression": "at 02:30", "timezone": "Europe/London", "count": 2},
    ).json()
    assert answer["normalized"] == "30 2 * * *"
    assert "02:30" in answer["description"]
    assert len(answer["next"]) == 2
    bad = seeded.call("GET", "/cron/explain", params={"expression": "99 * * * *"})
    assert (bad.status_code, bad.json()["code"]) == (400, "X400001CRNINV")
    assert "99 * * * *" in bad.json()["message"]


def test_cross_tenant_canary_in_every_read(seeded: Api) -> None:
    """Tenant globex's names never appear in anything acme reads."""
    seeded.call("POST", "/tenants/globex/apps", json={"manifest": MANIFEST}, tenant="globex")
    seeded.call(
        "POST", "/tenants/globex/schedules/billing/prod/globex-nightly/run", tenant="globex"
    )
    for path in (
        S,
        S + "?stack=shop",
        ROW,
        ROW + "/history",
        "/tenants/acme/jobs",
        "/tenants/acme/events",
        "/tenants/acme/queue/items",
    ):
        for role in ("viewer", "admin"):
            answer = seeded.call("GET", path, role=role)
            assert answer.status_code == 200, (path, answer.text)
            assert "globex" not in answer.text, path
    platform = seeded.call("GET", S, tenant=None).json()["items"]
    assert {row["tenant"] for row in platform} == {"acme"}


def test_create_and_list_answer_exactly_what_the_response_model_answers(seeded: Api) -> None:
    # create and list build their JSON themselves (hot paths); GET goes through
    # the response model. A client must not be able to tell them apart.
    body = {"job": "report", "cron": "*/5 * * * *", "name": "rendered", "stack": "billing"}
    body |= {"environment": "prod", "payload": {"note": "héllo", "n": 1.5, "deep": [None, True]}}
    created = seeded.call("POST", "/tenants/acme/schedules", json=body)
    assert created.status_code == 201
    assert created.headers["content-type"] == "application/json"
    assert created.headers["location"].endswith("/billing/prod/rendered")
    fetched = seeded.call("GET", "/tenants/acme/schedules/billing/prod/rendered")
    assert created.json() == fetched.json()
    assert created.headers["etag"] == fetched.headers["etag"] == '"1"'
    assert created.json()["created_at"].endswith("Z")
    listed = seeded.call("GET", "/tenants/acme/schedules", params={"search": "rendered"}).json()
    assert listed == {"items": [fetched.json()], "next_cursor": None}


def test_pause_resume_and_backfill_routes(seeded: Api) -> None:
    etag = seeded.call("GET", ROW).headers["ETag"]
    until = "2026-01-07T00:00:00+00:00"
    paused = seeded.call(
        "POST", ROW + "/pause", json={"until": until, "note": "freeze"}, headers={"If-Match": etag}
    )
    assert paused.status_code == 200, paused.text
    body = paused.json()
    assert body["paused_note"] == "freeze" and body["paused_by"] == "token:acme-admin"
    assert body["paused_until"] == "2026-01-07T00:00:00Z" and body["paused_at"] is not None
    assert paused.headers["ETag"] != etag
    stale = seeded.call("POST", ROW + "/resume", headers={"If-Match": etag})
    assert stale.status_code == 412 and stale.json()["code"] == "X412001REVSTL"
    past = seeded.call("POST", ROW + "/pause", json={"until": "2020-01-01T00:00Z"})
    assert past.status_code == 400 and past.json()["code"] == "X400102UNTINV"
    assert seeded.call("GET", ROW).json()["paused_until"] == "2026-01-07T00:00:00Z"
    resumed = seeded.call("POST", ROW + "/resume").json()
    assert resumed["paused_at"] is None and resumed["paused_note"] is None
    dry = seeded.call(
        "POST", ROW + "/backfill", json={"from": "2026-01-01", "to": "2026-01-04", "dry_run": True}
    )
    assert dry.status_code == 200, dry.text
    assert dry.json()["enqueued"] == [f"2026-01-0{d}T02:30:00Z" for d in (1, 2, 3)]
    assert dry.json()["item_ids"] == []
    done = seeded.call("POST", ROW + "/backfill", json={"from": "2026-01-01", "to": "2026-01-04"})
    assert len(done.json()["item_ids"]) == 3
    items = seeded.call("GET", "/tenants/acme/queue/items").json()["items"]
    assert sorted(item["source"] for item in items) == ["backfill"] * 3
    over = seeded.call("POST", ROW + "/backfill", json={"from": "2023-01-01", "to": "2026-01-04"})
    assert over.status_code == 400 and over.json()["code"] == "X400104BKFCAP"
    busy = seeded.call("POST", ROW + "/backfill", json={"from": "2025-12-30", "to": "2026-01-01"})
    assert busy.status_code == 409 and busy.json()["code"] == "X409105BKFACT"
    backwards = seeded.call(
        "POST", ROW + "/backfill", json={"from": "2026-01-03", "to": "2026-01-02"}
    )
    assert backwards.status_code == 400 and backwards.json()["code"] == "X400103BKFRNG"


def test_jitter_through_the_api(seeded: Api) -> None:
    created = seeded.call(
        "POST",
        S,
        json={"job": "report", "cron": "@hourly", "name": "spread", "stack": "billing",
              "environment": "prod", "jitter": 900},
    )  # fmt: skip
    assert created.status_code == 201, created.text
    assert 0 <= created.json()["jitter_offset"] < 900 and created.json()["jitter"] == 900
    too_long = seeded.call("PATCH", S + "/billing/prod/spread", json={"jitter": 3600})
    assert too_long.status_code == 400 and too_long.json()["code"] == "X400101JITLNG"
    negative = seeded.call("PATCH", S + "/billing/prod/spread", json={"jitter": -5})
    assert negative.status_code == 400 and negative.json()["code"] == "X400100JITINV"
