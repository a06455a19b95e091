"""`app diff|promote --from-env A --to-env B` through the installed command (issue 38):
the table and --json, the token printed and refused when stale (exit 4, nothing
written), a promote's versions, idempotence, and each refusal's exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_process import Cronplane

from spec_manifest import SPEC_MANIFEST

ENVS = ("--from-env", "staging", "--to-env", "prod")
STAGING = ("--stack", "billing", "--env", "staging")
PROD = ("--stack", "billing", "--env", "prod")


def _json(outcome: Any) -> Any:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()


def _statuses(shown: Any) -> dict[str, str]:
    return {s["name"]: s["status"] for s in shown["schedules"]}


def test_diff_then_promote(cronplane: Cronplane, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(SPEC_MANIFEST)
    for env in ("staging", "prod"):
        assert cronplane("app", "install", "app.yaml", "--env", env).code == 0
    window = ("schedule", "window", "send-invoices", "--max-runs", "5")
    assert cronplane(*STAGING, *window).code == 0
    add = ("schedule", "add", "adhoc", "--job", "build-report", "--cron", "0 9 * * *")
    assert cronplane(*STAGING, *add).code == 0

    shown = _json(cronplane("app", "diff", *ENVS, "--json"))
    assert _statuses(shown) == {
        "adhoc": "only_in_source", "nightly-report": "same", "send-invoices": "differs"
    }  # fmt: skip
    (fields,) = [s["fields"] for s in shown["schedules"] if s["name"] == "send-invoices"]
    assert [f["field"] for f in fields] == ["max_runs", "overrides"]
    assert (fields[0]["target"], fields[0]["source"], fields[0]["source_override"]) == (
        None, 5, True
    )  # fmt: skip
    table = cronplane("app", "diff", *ENVS)
    assert table.code == 0, table.stderr
    assert f"token: {shown['token']}" in table.stdout and "5 (override)" in table.stdout
    assert "staging -> prod (every stack): 1 only in source, 1 differs, 1 same" in table.stdout
    # One stack's diff is another comparison: its token is its own.
    one = _json(cronplane("app", "diff", *ENVS, "--stack", "billing", "--json"))
    assert one["stack"] == "billing" and one["token"] != shown["token"]
    assert one["schedules"] == shown["schedules"]

    dry = cronplane("app", "promote", *ENVS, "--dry-run")
    assert dry.code == 0 and "would promote staging -> prod: 1 created, 1 updated" in dry.stdout
    assert _statuses(_json(cronplane("app", "diff", *ENVS, "--json"))) == _statuses(shown)

    # A target row edited since the diff: refused whole, exit 4, nothing written.
    assert cronplane(*PROD, "schedule", "window", "nightly-report", "--max-runs", "3").code == 0
    moved = _json(cronplane("app", "diff", *ENVS, "--json"))
    stale = cronplane("app", "promote", *ENVS, "--diff-token", shown["token"])
    assert stale.code == 4 and "X409382PRMCHG" in stale.stderr
    assert _json(cronplane("app", "diff", *ENVS, "--json")) == moved

    done = _json(
        cronplane(
            "app", "promote", *ENVS, "--diff-token", moved["token"], "--reason", "r7", "--json"
        )
    )
    assert [s["name"] for s in done["created"]] == ["adhoc"]
    assert sorted(s["name"] for s in done["updated"]) == ["nightly-report", "send-invoices"]
    assert set(_statuses(_json(cronplane("app", "diff", *ENVS, "--json"))).values()) == {"same"}
    versions = _json(cronplane(*PROD, "schedule", "versions", "send-invoices", "--json"))
    assert (versions[0]["via"], versions[0]["reason"]) == ("promote", "promoted from staging: r7")

    again = cronplane("app", "promote", *ENVS)
    assert again.code == 0 and "promoted staging -> prod: 0 created, 0 updated" in again.stdout


def test_refusals_exit_by_class(cronplane: Cronplane) -> None:
    assert cronplane("app", "promote", *ENVS, "--only", "nope").code == 3
    assert cronplane("app", "diff", "--from-env", "prod", "--to-env", "no way").code == 2
    assert cronplane("app", "promote", "--from-env", "staging").code == 2
