"""`POST …/pause {until, note, missed}` over HTTP (issue 36), on SQLite and PostgreSQL:
the policy is stored and answered, refused with a coded 400 (nothing changed) without
`until` or over the cap, documented in the OpenAPI document, taken by pause by selector;
and a real dispatcher on the app's clock ends the pause with what the policy names."""

from __future__ import annotations

from api_support import Api

from cronplane.processes.dispatcher import Dispatcher
from service_support import START, snapshot

ROW = "/tenants/acme/schedules/billing/prod/acme-nightly"
NIGHTS = [f"2026-01-0{d}T02:30:00Z" for d in (6, 7, 8)]  # the cron is 30 2 * * * (UTC)


def test_pause_with_missed_then_its_end_enqueues_each_passed_night(seeded: Api) -> None:
    before = snapshot(seeded.database)
    alone = seeded.call("POST", ROW + "/pause", json={"missed": "all"})
    assert alone.status_code == 400 and alone.json()["code"] == "X400102UNTINV"
    assert alone.json()["detail"] == {"field": "until", "missed": "all"}
    over = seeded.call("POST", ROW + "/pause", json={"until": "2030-01-01T00:00Z", "missed": "all"})
    assert over.status_code == 400 and over.json()["code"] == "X400104BKFCAP"
    odd = seeded.call("POST", ROW + "/pause", json={"until": "2026-01-09T00:00Z", "missed": "x"})
    assert odd.status_code == 400 and odd.json()["code"] == "X400007REQINV"
    assert snapshot(seeded.database) == before
    paused = seeded.call(
        "POST", ROW + "/pause", json={"until": "2026-01-08T12:00Z", "note": "x", "missed": "all"}
    )
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused_missed"] == "all"
    assert seeded.call("GET", ROW).json()["paused_missed"] == "all"
    dispatcher = Dispatcher(seeded.database, seeded.clock, holder="api-test")
    for day in (6, 7, 8, 9):
        seeded.clock.set(START.replace(day=day, hour=2, minute=30, second=1))
        dispatcher.tick()
        dispatcher.tick()
    items = seeded.call("GET", "/tenants/acme/queue/items", params={"limit": 100}).json()["items"]
    got = sorted((i["scheduled_for"], i["source"]) for i in items)
    assert got == [*((n, "backfill") for n in NIGHTS), ("2026-01-09T02:30:00Z", "schedule")]
    assert seeded.call("GET", ROW).json()["paused_at"] is None
    history = seeded.call("GET", ROW + "/history").json()
    rows = history["items"] if isinstance(history, dict) else history
    (resumed,) = [e for e in rows if e["code"] == "V200102SCHRES"]
    assert resumed["actor"] == "dispatcher" and resumed["detail"]["enqueued"] == 3
    assert resumed["detail"]["missed"] == "all"
    dispatcher.release()


def test_the_openapi_document_and_pause_by_selector_carry_missed(seeded: Api) -> None:
    document = seeded.call("GET", "/api/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    policy = {"type": "string", "enum": ["skip", "once", "all"]}
    for schema, field in (
        ("PauseBody", "missed"),
        ("SelectionBody", "missed"),
        ("ScheduleOut", "paused_missed"),
    ):
        assert schemas[schema]["properties"][field]["anyOf"] == [policy, {"type": "null"}]
    answer = seeded.call(
        "POST",
        "/tenants/acme/schedules/actions/pause",
        json={"search": "acme-nightly", "until": "2026-01-07T00:00Z", "missed": "once"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["changed"] == 1
    assert seeded.call("GET", ROW).json()["paused_missed"] == "once"
    refused = seeded.call(
        "POST", "/tenants/acme/schedules/actions/resume", json={"search": "acme-nightly"}
    )
    assert refused.json()["changed"] == 1 and seeded.call("GET", ROW).json()["paused_at"] is None
    alone = seeded.call(
        "POST",
        "/tenants/acme/schedules/actions/pause",
        json={"search": "acme-nightly", "missed": "all"},
    )
    assert alone.json()["refused"] == 1
    assert alone.json()["rows"][0]["code"] == "X400102UNTINV"
