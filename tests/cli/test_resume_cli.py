"""`schedule resume --missed skip|once|all` from the installed command (issue 36); what
each enqueues is tests/service/test_resume_missed.py's."""

from __future__ import annotations

from cli_process import Cronplane


def test_resume_takes_a_missed_policy_and_refuses_another(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    added = cronplane("schedule", "add", "nightly", "--job", "flush", "--cron", "@daily")
    assert added.code == 0, added.stderr
    assert cronplane("schedule", "pause", "nightly", "--note", "migration").code == 0
    refused = cronplane("schedule", "resume", "nightly", "--missed", "most")
    assert refused.code == 2 and "most" in refused.stderr
    assert cronplane("schedule", "info", "nightly", "--json").json()["paused_at"] is not None  # type: ignore[index]
    resumed = cronplane("schedule", "resume", "nightly", "--missed", "all", "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["paused_at"] is None  # type: ignore[index]
    history = cronplane("schedule", "history", "nightly", "--json").json()
    resumes = [e for e in history if e["code"] == "V200102SCHRES"]  # type: ignore[union-attr, index]
    assert resumes and resumes[0]["detail"]["missed"] == "all"  # type: ignore[index]
