"""`schedule add --start-at --end-at --max-runs`, one-offs, `schedule window`, and how the
listing and info show a schedule's state and runs left: the installed command."""

from __future__ import annotations

from cli_process import Cronplane


def test_add_with_a_window_and_limit_then_change_it(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    added = cronplane(
        "schedule", "add", "campaign", "--job", "flush", "--cron", "0 9 * * *",
        "--tz", "Europe/Berlin", "--start-at", "2030-01-01T00:00", "--end-at",
        "2030-02-01T00:00+01:00", "--max-runs", "5", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    row = added.json()
    assert row["start_at"] == "2029-12-31T23:00:00+00:00"  # type: ignore[index]
    assert (row["max_runs"], row["runs_left"], row["state"]) == (5, 5, "active")  # type: ignore[index]
    info = cronplane("schedule", "info", "campaign")
    assert info.code == 0 and "5 of 5 runs left" in info.stdout and "ACTIVE" in info.stdout
    assert "2029-12-31" in info.stdout  # the window's start, shown in UTC
    # Down to no limit, then back to one.
    changed = cronplane("schedule", "window", "campaign", "--max-runs", "none", "--json")
    assert changed.code == 0 and changed.json()["max_runs"] is None  # type: ignore[index]
    again = cronplane("schedule", "window", "campaign", "--max-runs", "1", "--json").json()
    assert again["runs_left"] == 1  # type: ignore[index]
    upcoming = cronplane("schedule", "info", "campaign", "--json", "--next", "5").json()
    assert len(upcoming["upcoming"]) == 1  # type: ignore[index]  # no more than the runs left
    listing = cronplane("schedule", "ls")
    assert listing.code == 0 and "ACTIVE" in listing.stdout


def test_bad_values_exit_2_with_their_codes(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    base = ("schedule", "add", "x", "--job", "flush", "--cron", "@daily")
    cases = [
        (("--start-at", "2030-02-01T00:00", "--end-at", "2030-01-01T00:00"), "X400150WININV"),
        (("--max-runs", "0"), "X400151RUNINV"),
        (("--end-at", "later"), "X400150WININV"),
    ]
    for extra, code in cases:
        refused = cronplane(*base, *extra)
        assert refused.code == 2 and code in refused.stderr, (extra, refused.stderr)
    past = cronplane("schedule", "add", "y", "--job", "flush", "--cron", "once at 2020-01-01T00:00")
    assert past.code == 2 and "X400001CRNINV" in past.stderr and "not in the future" in past.stderr
    bad_limit = cronplane("schedule", "window", "x", "--max-runs", "many")
    assert bad_limit.code == 2 and "X400151RUNINV" in bad_limit.stderr
    assert cronplane("schedule", "ls", "--json").json() == []


def test_a_one_off_from_the_cli(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    added = cronplane(
        "schedule", "add", "launch", "--job", "flush", "--cron", "once at 2030-06-01T09:30",
        "--tz", "Europe/London", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    assert added.json()["cron"] == "@once 2030-06-01T09:30"  # type: ignore[index]
    info = cronplane("schedule", "info", "launch", "--json").json()
    assert info["description"] == "Once, at 09:30 on Saturday 1 June 2030"  # type: ignore[index]
    assert info["upcoming"] == ["2030-06-01T08:30:00+00:00"]  # type: ignore[index]
    explained = cronplane("cron", "explain", "once at 2030-06-01T09:30", "--tz", "Europe/London")
    assert explained.code == 0 and "Once, at 09:30" in explained.stdout
