"""Business calendars from the installed command (issue 36): `calendar add|ls|show|rm`,
`schedule add --exclude --on-excluded`, and `schedule info` naming the excluded days, with
the exit codes a script sees (2 bad input, 3 not found, 4 still excluded)."""

from __future__ import annotations

import json

from cli_process import Cronplane


def test_calendars_are_added_listed_shown_and_removed(cronplane: Cronplane) -> None:
    added = cronplane("calendar", "add", "weekends", "--weekly", "sat,sun", "--json")
    assert added.code == 0, added.stderr
    assert added.json()["weekly"] == ["sat", "sun"] and added.json()["revision"] == 1
    holidays = cronplane("calendar", "add", "uk", "--holidays", "GB-ENG", "--dates", "2027-12-24")
    assert holidays.code == 0, holidays.stderr
    listed = cronplane("calendar", "ls", "--json")
    assert [c["name"] for c in listed.json()] == ["uk", "weekends"]
    shown = cronplane("calendar", "show", "uk", "--json").json()
    assert (shown["holidays"], shown["dates"], shown["schedules"]) == ("GB-ENG", ["2027-12-24"], [])
    bad = cronplane("calendar", "add", "x", "--holidays", "Atlantis")
    assert bad.code == 2 and "X400364HOLINV" in bad.stderr and "Atlantis" in bad.stderr
    bad_date = cronplane("calendar", "add", "x", "--dates", "2027-13-01")
    assert bad_date.code == 2 and "YYYY-MM-DD" in bad_date.stderr
    assert cronplane("calendar", "show", "x").code == 3
    assert cronplane("calendar", "rm", "uk").code == 0
    assert [c["name"] for c in cronplane("calendar", "ls", "--json").json()] == ["weekends"]


def test_a_schedule_excludes_a_calendar_and_info_says_which_days_move(cronplane: Cronplane) -> None:
    assert cronplane("calendar", "add", "weekends", "--weekly", "sat,sun").code == 0
    assert cronplane("job", "add", "close", "--target", "python:app.jobs:close").code == 0
    added = cronplane(
        "schedule", "add", "month-end", "--job", "close", "--cron", "0 18 L * *",
        "--tz", "Europe/London", "--exclude", "weekends", "--on-excluded", "previous", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    assert (added.json()["exclude"], added.json()["on_excluded"]) == (["weekends"], "previous")
    info = cronplane("schedule", "info", "month-end", "--next", "12", "--json").json()
    # Within any 12 months some last day falls on a weekend, and runs on the Friday before.
    assert any("is excluded by weekends" in note and "Fri" in note for note in info["excluded"])
    for moment in info["upcoming"]:
        assert moment[:10] not in {n.split()[1] for n in info["excluded"]}
    still = cronplane("calendar", "rm", "weekends")
    assert still.code == 4 and "X409905STATEX" in still.stderr and "month-end" in still.stderr
    unknown = cronplane(
        "schedule", "add", "other", "--job", "close", "--cron", "@daily", "--exclude", "nope"
    )
    assert unknown.code == 2 and "calendar 'nope' not found" in unknown.stderr
    wrong = cronplane(
        "schedule", "add", "other", "--job", "close", "--cron", "@daily", "--on-excluded", "later"
    )
    assert wrong.code == 2


def test_under_json_a_refusal_is_the_json_body_on_stderr(cronplane: Cronplane) -> None:
    """`--json` errors are `{"code", "message", "detail"}` on stderr (issue 39), the body the
    API answers; without it, `CODE: message`."""
    assert cronplane("calendar", "add", "weekends", "--weekly", "sat,sun").code == 0
    missing = cronplane("calendar", "show", "nope", "--json")
    assert missing.code == 3 and missing.stdout == ""
    assert json.loads(missing.stderr) == {
        "code": "X404360CALNFD",
        "message": "calendar 'nope' not found",
        "detail": {"name": "nope"},
    }
    usage = cronplane("calendar", "show", "--json")
    assert usage.code == 2 and json.loads(usage.stderr)["code"] == "X400007REQINV"
    plain = cronplane("calendar", "show", "nope")
    assert plain.code == 3 and plain.stderr.startswith("X404360CALNFD: calendar 'nope'")
