"""`cronplane tenant ls|show|set-quota` and quota refusals through the installed command
(issue 18): a refusal exits 9 with its code naming the limit and its value; `--json`
documents; a bad quota setting is a coded error."""

from __future__ import annotations

from typing import Any

from cli_process import Cronplane


def _json(done: Any) -> Any:
    assert done.code == 0, (done.stdout, done.stderr)
    return done.json()


def test_set_quota_then_a_create_past_it_exits_9(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    add = ("schedule", "add", "--job", "flush", "--cron", "0 * * * *")
    assert cronplane(*add[:2], "one", *add[2:]).code == 0
    shown = _json(cronplane("tenant", "set-quota", "acme", "--max-schedules", "1", "--json"))
    assert shown["quota"]["max_schedules"] == 1 and shown["overrides"] == ["max_schedules"]
    assert shown["usage"] == {"schedules": 1, "jobs": 1, "fires_last_hour": 0, "queued": 0}

    refused = cronplane(*add[:2], "two", *add[2:])
    assert refused.code == 9, (refused.stdout, refused.stderr)
    assert refused.stderr.startswith("X403260QTASCH: ")
    assert "quota max_schedules is 1" in refused.stderr
    assert [row["name"] for row in _json(cronplane("schedule", "ls", "--json"))] == ["one"]

    # Cleared back to the platform's default (unlimited), or raised by the platform's own.
    cleared = _json(cronplane("tenant", "set-quota", "acme", "--clear", "max_schedules", "--json"))
    assert cleared["quota"]["max_schedules"] is None and cleared["overrides"] == []
    refused = cronplane(*add[:2], "two", *add[2:], CRONPLANE_QUOTA_MAX_SCHEDULES="1")
    assert refused.code == 9 and "X403260QTASCH" in refused.stderr
    assert cronplane(*add[:2], "two", *add[2:]).code == 0


def test_run_now_past_max_queued_exits_9_with_429s_code(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    made = cronplane("schedule", "add", "flush", "--job", "flush", "--cron", "0 * * * *")
    assert made.code == 0, made.stderr
    assert cronplane("tenant", "set-quota", "acme", "--max-queued", "1").code == 0
    assert cronplane("schedule", "run", "flush").code == 0
    refused = cronplane("schedule", "run", "flush")
    assert refused.code == 9 and refused.stderr.startswith("X429260QTAQUE: "), refused.stderr
    assert "quota max_queued is 1" in refused.stderr


def test_ls_and_show_report_usage_against_quota(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    assert (
        cronplane("tenant", "set-quota", "globex", "--max-jobs", "5", "--min-interval", "60").code
        == 0
    )
    listed = _json(cronplane("tenant", "ls", "--json"))
    assert [row["tenant"] for row in listed] == ["acme", "globex"]
    assert listed[0]["usage"]["jobs"] == 1 and listed[1]["quota"]["max_jobs"] == 5
    table = cronplane("tenant", "ls")
    assert table.code == 0 and "globex" in table.stdout and "0 / 5" in table.stdout
    show = cronplane("tenant", "show", "globex")
    assert show.code == 0 and "max_jobs" in show.stdout and "60" in show.stdout
    assert "tenant" in show.stdout and "platform" in show.stdout


def test_bad_quota_input_is_coded(cronplane: Cronplane) -> None:
    nothing = cronplane("tenant", "set-quota", "acme")
    assert nothing.code == 2 and nothing.stderr.startswith("X400007REQINV"), nothing.stderr
    both = cronplane("tenant", "set-quota", "acme", "--max-jobs", "1", "--clear", "max_jobs")
    assert both.code == 2 and "both set and cleared" in both.stderr
    negative = cronplane("tenant", "set-quota", "acme", "--max-jobs", "-1")
    assert negative.code == 2
    assert cronplane("db", "upgrade").code == 0
    bad_setting = cronplane("tenant", "ls", CRONPLANE_QUOTA_MAX_JOBS="many")
    assert bad_setting.code == 2 and "CRONPLANE_QUOTA_MAX_JOBS" in bad_setting.stderr
