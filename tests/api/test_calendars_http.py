"""Business calendars over real HTTP (issue 36), on SQLite and PostgreSQL: saved whole
with PUT, read back, refused with a code naming the bad part, excluded by a schedule
(whose preview shows the moved runs), kept while a schedule excludes them, and declared
in a manifest's crons as `exclude:` / `on_excluded:`.

Europe/London, 2027: Monday 31 May is the Spring Bank Holiday; 31 July a Saturday.
"""

from __future__ import annotations

from datetime import timedelta

from api_support import Api

C = "/tenants/acme/calendars"
S = "/tenants/acme/schedules"


def _calendars(api: Api) -> None:
    weekends = api.call("PUT", C + "/weekends", json={"weekly": ["sat", "sun"]})
    assert weekends.status_code == 200, weekends.text
    uk = api.call("PUT", C + "/uk", json={"holidays": "gb-eng", "description": "England"})
    assert uk.status_code == 200 and uk.json()["holidays"] == "GB-ENG"


def test_a_calendar_is_saved_read_and_replaced_by_revision(seeded: Api) -> None:
    _calendars(seeded)
    shown = seeded.call("GET", C + "/weekends").json()
    assert (shown["weekly"], shown["dates"], shown["revision"]) == (["sat", "sun"], [], 1)
    replaced = seeded.call(
        "PUT",
        C + "/weekends",
        json={"weekly": ["sun", "sat"], "dates": ["2027-12-27"], "revision": 1},
    )
    assert replaced.status_code == 200 and replaced.json()["revision"] == 2
    assert replaced.json()["dates"] == ["2027-12-27"]
    stale = seeded.call("PUT", C + "/weekends", json={"weekly": ["sat"], "revision": 1})
    assert stale.status_code == 412 and stale.json()["code"] == "X412001REVSTL"
    names = [c["name"] for c in seeded.call("GET", C).json()["items"]]
    assert names == ["uk", "weekends"]
    assert seeded.call("GET", "/tenants/globex/calendars", tenant="globex").json()["items"] == []
    missing = seeded.call("GET", C + "/nope")
    assert missing.status_code == 404 and missing.json()["code"] == "X404360CALNFD"


def test_bad_parts_are_refused_with_the_field_named_and_change_nothing(seeded: Api) -> None:
    _calendars(seeded)
    before = seeded.call("GET", C + "/weekends").json()
    for body, field, code in (
        ({"weekly": ["caturday"]}, "weekly", "X400007REQINV"),
        ({"dates": ["2027-02-30"]}, "dates", "X400007REQINV"),
        ({"holidays": "XX"}, "holidays", "X400364HOLINV"),
    ):
        refused = seeded.call("PUT", C + "/weekends", json=body)
        assert refused.status_code == 400, refused.text
        assert (refused.json()["code"], refused.json()["detail"]["field"]) == (code, field)
    every_day = {"weekly": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}
    refused = seeded.call("PUT", C + "/weekends", json=every_day)  # the schema's maxItems: 6
    assert refused.status_code == 400 and refused.json()["code"] == "X400007REQINV"
    assert "body.weekly" in refused.json()["message"]
    assert seeded.call("GET", C + "/weekends").json() == before


def test_a_schedule_excludes_calendars_and_its_preview_moves_the_runs(seeded: Api) -> None:
    _calendars(seeded)
    body = {
        "job": "report", "cron": "0 18 L * *", "name": "close", "stack": "billing",
        "timezone": "Europe/London", "exclude": ["weekends", "uk"], "on_excluded": "previous",
    }  # fmt: skip
    created = seeded.call("POST", S, json=body)
    assert created.status_code == 201, created.text
    assert (created.json()["exclude"], created.json()["on_excluded"]) == (
        ["weekends", "uk"],
        "previous",
    )
    preview = seeded.call(
        "GET",
        S + "/billing/default/close/preview",
        params={"after": "2027-05-01T00:00:00Z", "count": 3},
    ).json()
    assert preview["next"] == [
        "2027-05-28T17:00:00Z",  # Mon 31 May, Spring Bank Holiday: Friday 28th
        "2027-06-30T17:00:00Z",
        "2027-07-30T17:00:00Z",  # Sat 31 July: Friday 30th
    ]
    assert any("Spring Bank Holiday (GB-ENG)" in note for note in preview["notes"])
    used = seeded.call("DELETE", C + "/uk")
    assert used.status_code == 409 and used.json()["code"] == "X409905STATEX"
    assert used.json()["detail"]["schedules"] == ["billing/default/close"]
    assert seeded.call("GET", C + "/uk").json()["schedules"] == ["billing/default/close"]
    unknown = seeded.call("POST", S, json={**body, "name": "other", "exclude": ["nope"]})
    assert unknown.status_code == 400 and unknown.json()["detail"]["calendar"] == "nope"
    freed = seeded.call("PATCH", S + "/billing/default/close", json={"exclude": ["weekends"]})
    assert freed.status_code == 200, freed.text
    assert seeded.call("DELETE", C + "/uk").status_code == 200


def test_a_manifest_excludes_calendars_and_a_second_sync_writes_nothing(seeded: Api) -> None:
    _calendars(seeded)
    manifest = {
        "name": "payroll",
        "jobs": {"close": {"target": "python:billing.jobs:close"}},
        "crons": {
            "close": {
                "cron": "0 18 L * *",
                "timezone": "Europe/London",
                "exclude": ["weekends", "uk"],
                "on_excluded": "previous",
            }
        },
    }
    first = seeded.call("POST", "/tenants/acme/apps", json={"manifest": manifest})
    assert first.status_code == 200, first.text
    row = seeded.call("GET", S + "/payroll/default/close").json()
    assert (row["exclude"], row["on_excluded"]) == (["weekends", "uk"], "previous")
    again = seeded.call("POST", "/tenants/acme/apps", json={"manifest": manifest}).json()
    assert again["plan"]["unchanged"] == ["close"] and again["plan"]["updated"] == []
    missing = dict(manifest, crons={"close": {"cron": "0 18 L * *", "exclude": ["nope"]}})
    refused = seeded.call("POST", "/tenants/acme/apps", json={"manifest": missing})
    assert refused.status_code == 400 and "nope" in refused.text


def test_a_calendar_with_no_business_day_near_is_refused_with_a_code_never_a_500(
    seeded: Api,
) -> None:
    """A shift looks through 31 excluded days at most: a schedule that would find no
    business day is refused (X400001CRNINV, field exclude), a calendar change that would
    leave one so is refused, and a preview says why instead of failing."""
    today = seeded.clock.now().date()
    closed = [(today + timedelta(days=n)).isoformat() for n in range(60)]
    assert seeded.call("PUT", C + "/closed", json={"dates": closed}).status_code == 200
    body = {"job": "report", "cron": "0 9 * * *", "name": "daily", "stack": "billing",
            "exclude": ["closed"], "on_excluded": "next"}  # fmt: skip
    refused = seeded.call("POST", S, json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "X400001CRNINV"
    assert refused.json()["detail"]["field"] == "exclude"
    assert seeded.call("PUT", C + "/closed", json={"dates": closed[:3]}).status_code == 200
    assert seeded.call("POST", S, json=body).status_code == 201
    widened = seeded.call("PUT", C + "/closed", json={"dates": closed})
    assert widened.status_code == 400 and widened.json()["code"] == "X400001CRNINV"
    assert seeded.call("GET", C + "/closed").json()["dates"] == closed[:3]  # unchanged
    preview = seeded.call("GET", S + "/billing/default/daily/preview", params={"count": 3})
    assert preview.status_code == 200, preview.text
