"""`cronplane schedule pause|resume|backfill` and `add --jitter` through the installed
command in a subprocess: output, `--json`, and exit codes for coded errors."""

from __future__ import annotations

from typing import Any

from cli_process import Cronplane


def setup(cronplane: Cronplane, *extra: str) -> None:
    assert cronplane("job", "add", "report", "--target", "python:app.jobs:report").code == 0
    made = cronplane("schedule", "add", "nightly", "--job", "report", "--cron", "0 3 * * *", *extra)
    assert made.code == 0, made.stderr


def row(cronplane: Cronplane) -> dict[str, Any]:
    found = cronplane("schedule", "info", "nightly", "--json")
    assert found.code == 0, found.stderr
    document: dict[str, Any] = found.json()  # type: ignore[assignment]
    return document


def test_pause_shows_who_why_and_until_and_resume_clears_it(cronplane: Cronplane) -> None:
    setup(cronplane)
    paused = cronplane(
        "schedule", "pause", "nightly", "--note", "vendor outage", "--until", "2099-01-01T00:00"
    )
    assert paused.code == 0, paused.stderr
    assert "paused nightly" in paused.stdout and "vendor outage" in paused.stdout
    document = row(cronplane)
    assert document["paused_by"] == "cli:test" and document["paused_note"] == "vendor outage"
    assert document["paused_until"] == "2099-01-01T00:00:00+00:00"
    info = cronplane("schedule", "info", "nightly")
    assert (
        "PAUSED" in info.stdout and "by cli:test" in info.stdout and "vendor outage" in info.stdout
    )
    listing = cronplane("schedule", "ls")
    assert "PAUSED" in listing.stdout
    assert cronplane("schedule", "ls", "--json").json()[0]["paused_note"] == "vendor outage"  # type: ignore[index]
    resumed = cronplane("schedule", "resume", "nightly", "--json")
    assert resumed.code == 0 and resumed.json()["paused_at"] is None  # type: ignore[index]
    assert "ACTIVE" in cronplane("schedule", "info", "nightly").stdout
    # Resuming again is a no-op, not an error.
    assert cronplane("schedule", "resume", "nightly").code == 0


def test_bad_until_exits_2_and_changes_nothing(cronplane: Cronplane) -> None:
    setup(cronplane)
    for until in ("next tuesday", "2001-01-01T00:00Z"):
        refused = cronplane("schedule", "pause", "nightly", "--until", until)
        assert refused.code == 2 and "X400102UNTINV" in refused.stderr, refused.stderr
    assert row(cronplane)["paused_at"] is None
    stale = cronplane("schedule", "pause", "nightly", "--revision", "9")
    assert stale.code == 5 and "X412001REVSTL" in stale.stderr
    missing = cronplane("schedule", "pause", "nope")
    assert missing.code == 3


def test_backfill_dry_run_then_enqueue_then_already_fired(cronplane: Cronplane) -> None:
    setup(cronplane, "--overlap", "allow")
    window = ("--from", "2026-01-01T00:00Z", "--to", "2026-01-04T00:00Z")
    dry = cronplane("schedule", "backfill", "nightly", *window, "--dry-run")
    assert dry.code == 0, dry.stderr
    assert dry.stdout.count("would enqueue") == 4  # three lines and the summary
    assert cronplane("queue", "ls", "--json").json() == []
    done = cronplane("schedule", "backfill", "nightly", *window, "--json")
    assert done.code == 0, done.stderr
    assert done.json()["enqueued"] == [  # type: ignore[index]
        f"2026-01-0{day}T03:00:00+00:00" for day in (1, 2, 3)
    ]
    items = cronplane("queue", "ls", "--json").json()
    assert sorted(item["source"] for item in items) == ["backfill"] * 3  # type: ignore[union-attr,index]
    again = cronplane("schedule", "backfill", "nightly", *window)
    assert again.code == 0 and again.stdout.count("already fired") == 4
    backwards = cronplane(
        "schedule", "backfill", "nightly", "--from", "2026-01-04", "--to", "2026-01-01"
    )
    assert backwards.code == 2 and "X400103BKFRNG" in backwards.stderr
    huge = cronplane(
        "schedule", "backfill", "nightly", "--from", "2020-01-01", "--to", "2026-01-01"
    )
    assert huge.code == 2 and "X400104BKFCAP" in huge.stderr


def test_backfill_refused_by_the_overlap_rule_exits_4(cronplane: Cronplane) -> None:
    setup(cronplane)
    assert cronplane("schedule", "run", "nightly").code == 0
    window = ("--from", "2026-01-01T00:00Z", "--to", "2026-01-03T00:00Z")
    refused = cronplane("schedule", "backfill", "nightly", *window)
    assert refused.code == 4 and "X409105BKFACT" in refused.stderr, refused.stderr
    allowed = cronplane("schedule", "backfill", "nightly", *window, "--allow-overlap")
    assert allowed.code == 0 and "enqueued 2" in allowed.stdout


def test_add_with_jitter_and_the_coded_refusals(cronplane: Cronplane) -> None:
    setup(cronplane, "--jitter", "600")
    document = row(cronplane)
    assert document["jitter"] == 600 and 0 <= document["jitter_offset"] < 600
    assert "Jitter" in cronplane("schedule", "info", "nightly").stdout
    too_long = cronplane(
        "schedule", "add", "fast", "--job", "report", "--cron", "*/5 * * * *", "--jitter", "300"
    )
    assert too_long.code == 2 and "X400101JITLNG" in too_long.stderr
    negative = cronplane(
        "schedule", "add", "neg", "--job", "report", "--cron", "@daily", "--jitter", "-1"
    )
    assert negative.code == 2 and "X400100JITINV" in negative.stderr
