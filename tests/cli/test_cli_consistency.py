"""The CLI says what it means (issue 39): a legacy zone name (EST, CET, US/Eastern…) is
accepted with a warning naming the city zone it likely stands for (EST is UTC-05:00 all
year, so a schedule "at 09:00 EST" runs at 10:00 New York time all summer), and `token`
commands, which work on the database only, say so when only a server is named."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import Cronplane
from test_alert_cli import SEALED


def test_a_legacy_zone_is_accepted_with_a_warning(cronplane: Cronplane) -> None:
    summer = ("--after", "2027-07-01T00:00")
    est = cronplane("cron", "next", "0 9 * * *", "--tz", "EST", "-n", "1", *summer)
    assert est.code == 0 and est.stdout.split() == ["2027-07-01T14:00:00Z"]  # fixed -05:00
    assert "warning: EST is a fixed offset with no daylight saving" in est.stderr
    assert "America/New_York" in est.stderr
    city = cronplane("cron", "next", "0 9 * * *", "--tz", "America/New_York", "-n", "1", *summer)
    assert city.stdout.split() == ["2027-07-01T13:00:00Z"] and city.stderr == ""
    explained = cronplane("cron", "explain", "0 9 * * *", "--tz", "CET")
    assert explained.code == 0 and "warning: CET is a legacy zone name" in explained.stderr
    assert cronplane("job", "add", "close", "--target", "python:app.jobs:close").code == 0
    added = cronplane(
        "schedule", "add", "eastern", "--job", "close", "--cron", "0 9 * * *",
        "--tz", "US/Eastern", "--json",
    )  # fmt: skip
    assert added.code == 0 and added.json()["timezone"] == "US/Eastern"
    assert "warning: US/Eastern is a legacy zone name" in added.stderr


def test_token_commands_say_they_are_local_only_when_a_server_is_named(
    cronplane: Cronplane,
) -> None:
    """`token` works on the database; with only --url it names the rule (issue 39), not a
    database it never meant to open; with a database named too, it works."""
    no_db = {"CRONPLANE_DATABASE_URL": None}
    refused = cronplane("--url", "http://127.0.0.1:9", "token", "ls", **no_db)
    assert refused.code == 2 and "token commands are local only" in refused.stderr
    as_json = cronplane("--url", "http://127.0.0.1:9", "token", "ls", "--json", **no_db)
    assert as_json.code == 2 and json.loads(as_json.stderr)["detail"] == {"field": "url"}
    made = cronplane(
        "--url", "http://127.0.0.1:9", "token", "create", "--tenant", "acme", "--role", "viewer"
    )
    assert made.code == 0, made.stderr
    local = cronplane("--url", "http://127.0.0.1:9", "token", "ls", "--json")
    assert local.code == 0 and [t["tenant"] for t in local.json()] == ["acme"]


def test_queue_ls_has_a_header_and_info_shows_no_python_reprs(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "close", "--target", "python:app.jobs:close").code == 0
    added = cronplane("schedule", "add", "nightly", "--job", "close", "--cron", "@daily")
    assert added.code == 0, added.stderr
    assert cronplane("schedule", "run", "nightly").code == 0
    listed = cronplane("queue", "ls")
    assert listed.code == 0
    header = next(line for line in listed.stdout.splitlines() if "Status" in line)
    for column in ("Id", "Status", "Source", "Job", "For", "Attempts"):
        assert column in header
    assert "0/3" in listed.stdout  # attempts out of the job's maximum
    item_id = json.loads(cronplane("queue", "ls", "--json").stdout)[0]["id"]
    info = cronplane("queue", "info", item_id)
    assert info.code == 0 and "None" not in info.stdout and "False" in info.stdout
    assert "Scheduled for" in info.stdout and " UTC" in info.stdout


def test_a_mistyped_job_or_schedule_name_gets_a_did_you_mean(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "report", "--target", "python:app.jobs:report").code == 0
    typo = cronplane("schedule", "add", "nightly", "--job", "reprot", "--cron", "@daily")
    assert typo.code == 3 and typo.stderr.startswith("X404903JOBNFD")
    assert "did you mean 'report'?" in typo.stderr
    assert cronplane("schedule", "add", "nightly", "--job", "report", "--cron", "@daily").code == 0
    missing = cronplane("schedule", "info", "nigthly")
    assert missing.code == 3 and "did you mean 'nightly'?" in missing.stderr
    unrelated = cronplane("schedule", "info", "zzzzzz")
    assert unrelated.code == 3 and "did you mean" not in unrelated.stderr


def test_a_mistyped_rule_or_app_name_gets_a_did_you_mean(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "name: billing\njobs:\n  sweep: {target: 'python:app.jobs:sweep'}\n"
        "crons:\n  nightly: {job: sweep, cron: '0 2 * * *'}\n"
    )
    assert cronplane("app", "install", str(manifest)).code == 0
    typo = cronplane("app", "uninstall", "biling")
    assert typo.code == 0 and "warning: the tenant acme has no app 'biling'" in typo.stderr
    assert "did you mean 'billing'?" in typo.stderr
    listed = cronplane("schedule", "ls", "--all", "--json")
    assert [row["name"] for row in listed.json()] == ["nightly"]  # nothing removed
    channel = cronplane(
        "alert", "channel", "add", "ops", "--kind", "webhook",
        "--endpoint", "https://hooks.example.com/cron", "--secret", SEALED,
    )  # fmt: skip
    assert channel.code == 0, channel.stderr
    rule = cronplane(
        "alert", "rule", "add", "sweep-failed", "--condition", "failed", "--channel", "ops"
    )
    assert rule.code == 0, rule.stderr
    missing = cronplane("alert", "rule", "rm", "sweep-faild")
    assert missing.code == 3 and missing.stderr.startswith("X404311ALRNFD")
    assert "did you mean 'sweep-failed'?" in missing.stderr
    assert cronplane("alert", "rule", "rm", "sweep-failed").code == 0
    gone = cronplane("app", "uninstall", "billing")
    assert gone.code == 0 and "warning" not in gone.stderr
