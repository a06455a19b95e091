"""`schedule pause NAME --until WHEN --missed skip|once|all` from the installed command
(issue 36): stored, shown and recorded; refused with a coded error (exit 2, nothing
changed) without --until or over the backfill cap. What the pause's end enqueues is
tests/service/test_pause_missed.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from cli_process import Cronplane


def _row(cronplane: Cronplane) -> dict[str, Any]:
    found = cronplane("schedule", "info", "nightly", "--json")
    assert found.code == 0, found.stderr
    document: dict[str, Any] = found.json()  # type: ignore[assignment]
    return document


def test_pause_with_missed_is_stored_shown_and_recorded(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "report", "--target", "python:app.jobs:report").code == 0
    made = cronplane("schedule", "add", "nightly", "--job", "report", "--cron", "0 3 * * *")
    assert made.code == 0, made.stderr
    before = _row(cronplane)
    alone = cronplane("schedule", "pause", "nightly", "--missed", "all")
    assert alone.code == 2 and "X400102UNTINV" in alone.stderr and "until" in alone.stderr
    # Every day until 2099: far more occurrences than one backfill may enqueue.
    over = cronplane(
        "schedule", "pause", "nightly", "--until", "2099-01-01T00:00", "--missed", "all"
    )
    assert over.code == 2 and "X400104BKFCAP" in over.stderr
    odd = cronplane(
        "schedule", "pause", "nightly", "--until", "2099-01-01T00:00", "--missed", "most"
    )
    assert odd.code == 2 and "most" in odd.stderr
    assert _row(cronplane) == before  # nothing changed
    until = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    paused = cronplane("schedule", "pause", "nightly", "--until", until, "--missed", "all")
    assert paused.code == 0, paused.stderr
    assert "missed at its end: all" in paused.stdout
    assert _row(cronplane)["paused_missed"] == "all"
    assert "missed at its end: all" in cronplane("schedule", "info", "nightly").stdout
    history = cronplane("schedule", "history", "nightly", "--json").json()
    pauses = [e for e in history if e["code"] == "V200101SCHPAU"]  # type: ignore[union-attr, index]
    assert pauses[0]["detail"]["missed"] == "all"  # type: ignore[index]
    resumed = cronplane("schedule", "resume", "nightly", "--json")
    assert resumed.code == 0 and resumed.json()["paused_missed"] is None  # type: ignore[index]


def test_pause_by_selector_takes_missed(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "report", "--target", "python:app.jobs:report").code == 0
    for name in ("sel-a", "sel-b"):
        made = cronplane(
            "schedule", "add", name, "--job", "report", "--cron", "@daily", "--label", "team=pay"
        )
        assert made.code == 0, made.stderr
    until = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    done = cronplane(
        "schedule", "pause", "-l", "team=pay", "--until", until, "--missed", "once", "--json"
    )
    assert done.code == 0, done.stderr
    assert done.json()["changed"] == 2  # type: ignore[index]
    for name in ("sel-a", "sel-b"):
        info = cronplane("schedule", "info", name, "--json").json()
        assert info["paused_missed"] == "once"  # type: ignore[index]
