"""`cronplane alert rule add NAME --selector …` from the installed command (issue 37):
the scope is inferred, `rule ls` shows the canonical selector, a bad selector is
refused with X400310ALRINV (exit 2) and nothing is stored."""

from __future__ import annotations

import json

from cli_process import Cronplane

from cronplane.targets.webhook import SecretKeyring

SEALED = SecretKeyring(b"cli-alert-tests-key-0123456789").seal("whsec_the_receivers_secret")


def test_a_selector_rule_through_the_command(cronplane: Cronplane) -> None:
    hook = cronplane(
        "alert", "channel", "add", "hook", "--kind", "webhook",
        "--endpoint", "https://hooks.example.com/cron", "--secret", SEALED,
    )  # fmt: skip
    assert hook.code == 0, hook.stderr
    bad = cronplane(
        "alert", "rule", "add", "pay", "--condition", "failed",
        "--selector", "team in (payments", "--channel", "hook",
    )  # fmt: skip
    assert bad.code == 2 and bad.stderr.startswith("X400310ALRINV"), bad.stderr
    assert "selector" in bad.stderr
    mixed = cronplane(
        "alert", "rule", "add", "pay", "--condition", "failed", "--scope", "tenant",
        "--selector", "team=payments", "--channel", "hook",
    )  # fmt: skip
    assert mixed.code == 2 and mixed.stderr.startswith("X400310ALRINV"), mixed.stderr
    assert json.loads(cronplane("alert", "rule", "ls", "--json").stdout) == []

    made = cronplane(
        "alert", "rule", "add", "pay", "--condition", "failed",
        "--selector", "tier!=batch, team=payments", "--channel", "hook", "--json",
    )  # fmt: skip
    assert made.code == 0, made.stderr
    (shown,) = json.loads(made.stdout)
    assert (shown["scope"], shown["selector"]) == ("selector", "team=payments,tier!=batch")
    table = cronplane("alert", "rule", "ls")
    assert table.code == 0 and "team=payments,tier!=batch" in table.stdout
    (listed,) = json.loads(cronplane("alert", "rule", "ls", "--json").stdout)
    assert listed["selector"] == "team=payments,tier!=batch"
