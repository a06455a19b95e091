"""`cronplane alert …` in a subprocess: coded errors and exit codes, secrets never printed."""

from __future__ import annotations

import json

from cli_process import Cronplane

from cronplane.targets.webhook import SecretKeyring

SEALED = SecretKeyring(b"cli-alert-tests-key-0123456789").seal("whsec_the_receivers_secret")


def test_channels_rules_and_alerts_through_the_command(cronplane: Cronplane) -> None:
    clear = cronplane(
        "alert", "channel", "add", "hook", "--kind", "webhook",
        "--endpoint", "https://hooks.example.com/cron", "--secret", "whsec_in_clear",
    )  # fmt: skip
    assert clear.code == 2 and "\nX400314CHNINV: " in clear.stderr
    assert "whsec_in_clear" not in clear.stdout + clear.stderr

    made = cronplane(
        "alert", "channel", "add", "hook", "--kind", "webhook",
        "--endpoint", "https://hooks.example.com/cron", "--secret", SEALED, "--json",
    )  # fmt: skip
    assert made.code == 0, made.stderr
    listed = cronplane("alert", "channel", "ls", "--json")
    assert [(c["name"], c["secret"]) for c in json.loads(listed.stdout)] == [("hook", "set")]
    table = cronplane("alert", "channel", "ls")
    for shown in (made, listed, table):
        assert SEALED not in shown.stdout and "whsec" not in shown.stdout
    again = cronplane("alert", "channel", "add", "hook", "--kind", "slack", "--secret", SEALED)
    assert again.code == 4 and again.stderr.startswith("X409316CHNDPL")

    no_threshold = cronplane(
        "alert", "rule", "add", "slow", "--condition", "long", "--job", "report",
        "--channel", "hook",
    )  # fmt: skip
    assert no_threshold.code == 2 and no_threshold.stderr.startswith("X400310ALRINV")
    assert "threshold" in no_threshold.stderr
    unknown = cronplane("alert", "rule", "add", "x", "--condition", "failed", "--channel", "nope")
    assert unknown.code == 2 and "'nope'" in unknown.stderr

    watched = ("--threshold", "600", "--channel", "hook", "--stack", "billing", "--env", "prod")
    # What a rule watches must exist (issue 39): a job, a schedule.
    ghost = cronplane("alert", "rule", "add", "slow", "--condition", "long", "--job", "report",
                      *watched)  # fmt: skip
    assert ghost.code == 3 and ghost.stderr.startswith("X404903JOBNFD: job 'report'")
    nightly = cronplane("alert", "rule", "add", "late", "--condition", "failed",
                        "--schedule", "nightly", *watched[2:])  # fmt: skip
    assert nightly.code == 3 and nightly.stderr.startswith("X404902SCHNFD")
    job = ("job", "add", "report", "--target", "python:app.jobs:report", "--stack", "billing")
    assert cronplane(*job).code == 0
    rule = cronplane(
        "alert", "rule", "add", "slow", "--condition", "long", "--job", "report", *watched,
        "--json",
    )  # fmt: skip
    assert rule.code == 0, rule.stderr
    (shown,) = json.loads(rule.stdout)
    assert (shown["scope"], shown["stack"], shown["environment"], shown["target"]) == (
        "job", "billing", "prod", "report",
    )  # fmt: skip
    assert cronplane("alert", "channel", "rm", "hook").code == 2  # a rule still names it
    assert json.loads(cronplane("alert", "ls", "--json").stdout) == []
    ack = cronplane("alert", "ack", "00000000-0000-0000-0000-000000000001")
    assert ack.code == 3 and ack.stderr.startswith("X404313ALTNFD")
    assert cronplane("alert", "ack", "not-an-id").code == 2
    assert cronplane("alert", "rule", "rm", "slow").code == 0
    gone = cronplane("alert", "rule", "rm", "slow")
    assert gone.code == 3 and gone.stderr.startswith("X404311ALRNFD")
    assert cronplane("alert", "channel", "rm", "hook").code == 0
    assert json.loads(cronplane("alert", "rule", "ls", "--json").stdout) == []


def test_an_email_channel_trusts_a_ca_file_only_with_starttls(cronplane: Cronplane) -> None:
    mail = ("alert", "channel", "add", "mail", "--kind", "email", "--host", "smtp.example.com",
            "--sender", "cron@example.com", "--to", "ops@example.com")  # fmt: skip
    bare = cronplane(*mail, "--ca-file", "/etc/cronplane/relay-ca.pem")
    assert bare.code == 2 and "\nX400314CHNINV: " in bare.stderr
    assert "config.ca_file" in bare.stderr
    made = cronplane(*mail, "--starttls", "--ca-file", "/etc/cronplane/relay-ca.pem", "--json")
    assert made.code == 0, made.stderr
    (shown,) = json.loads(made.stdout)
    assert shown["config"]["starttls"] is True
    assert shown["config"]["ca_file"] == "/etc/cronplane/relay-ca.pem"


def test_a_pause_limit_rule_through_the_command(cronplane: Cronplane) -> None:
    hook = ("alert", "channel", "add", "hook", "--kind", "webhook",
            "--endpoint", "https://hooks.example.com/cron", "--secret", SEALED)  # fmt: skip
    assert cronplane(*hook).code == 0
    rule = ("alert", "rule", "add", "held", "--condition", "skipped", "--threshold", "3600",
            "--channel", "hook", "--json")  # fmt: skip
    mixed = cronplane(*rule, "--reason", "overlap")  # --json: the refusal is JSON too
    assert mixed.code == 2 and json.loads(mixed.stderr)["code"] == "X400310ALRINV"
    assert "paused" in json.loads(mixed.stderr)["message"]
    made = cronplane(*rule, "--reason", "paused")
    assert made.code == 0, made.stderr
    (shown,) = json.loads(made.stdout)
    assert (shown["condition"], shown["reasons"], shown["threshold"]) == (
        "skipped",
        ["paused"],
        3600,
    )
