"""Window, max_runs, one-off and state over real HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

from api_support import Api

S = "/tenants/acme/schedules"


def test_create_with_a_window_and_limit_answers_state_and_runs_left(seeded: Api) -> None:
    created = seeded.call(
        "POST",
        S,
        json={
            "job": "report",
            "cron": "0 * * * *",
            "name": "limited",
            "stack": "billing",
            "timezone": "Europe/Berlin",
            "start_at": "2026-01-05T15:00",
            "end_at": "2026-01-06T00:00+01:00",
            "max_runs": 3,
        },
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["start_at"] == "2026-01-05T14:00:00Z"  # Berlin 15:00
    assert body["end_at"] == "2026-01-05T23:00:00Z"
    assert (body["max_runs"], body["run_count"], body["runs_left"]) == (3, 0, 3)
    assert body["state"] == "active" and body["next_run"] == "2026-01-05T14:00:00Z"
    assert seeded.call("GET", S + "/billing/default/limited").json() == body
    # The preview keeps to the window and the runs left: 3 runs, from 14:00 UTC.
    preview = seeded.call("GET", S + "/billing/default/limited/preview", params={"count": 10})
    assert preview.json()["next"] == [
        "2026-01-05T14:00:00Z",
        "2026-01-05T15:00:00Z",
        "2026-01-05T16:00:00Z",
    ]
    seeded.call("PATCH", S + "/billing/default/limited", json={"end_at": "2026-01-05T15:00Z"})
    preview = seeded.call("GET", S + "/billing/default/limited/preview", params={"count": 10})
    assert preview.json()["next"] == ["2026-01-05T14:00:00Z", "2026-01-05T15:00:00Z"]
    patched = seeded.call("PATCH", S + "/billing/default/limited", json={"max_runs": None})
    assert patched.status_code == 200 and patched.json()["runs_left"] is None


def test_a_one_off_is_created_and_previewed(seeded: Api) -> None:
    created = seeded.call(
        "POST",
        S,
        json={
            "job": "report",
            "cron": "once at 2026-02-01T09:30",
            "name": "launch",
            "stack": "billing",
        },
    )
    assert created.status_code == 201, created.text
    assert created.json()["cron"] == "@once 2026-02-01T09:30"
    explained = seeded.call(
        "POST",
        "/cron/explain",
        json={"expression": "once at 2026-02-01T09:30", "timezone": "UTC", "count": 5},
    ).json()
    assert explained["description"] == "Once, at 09:30 on Sunday 1 February 2026"
    assert explained["next"] == ["2026-02-01T09:30:00Z"]


def test_bad_values_get_their_codes(seeded: Api) -> None:
    cases = [
        ({"start_at": "2026-02-01T00:00", "end_at": "2026-01-01T00:00"}, "X400150WININV"),
        ({"end_at": "whenever"}, "X400150WININV"),
        ({"max_runs": 0}, "X400151RUNINV"),
        ({"cron": "once at 2025-01-01T00:00"}, "X400001CRNINV"),
        ({"cron": "once at 2025-13-01T00:00"}, "X400001CRNINV"),
    ]
    for values, code in cases:
        body = {"job": "report", "cron": "@daily", "name": "bad", "stack": "billing", **values}
        answer = seeded.call("POST", S, json=body)
        assert (answer.status_code, answer.json()["code"]) == (400, code), values
    assert seeded.call("GET", S + "/billing/default/bad").status_code == 404
