"""`schedule add --label KEY=VALUE` (repeatable) from the installed command (issue 37):
stored, shown by `info`, and a bad label refused with its code, exit 2."""

from __future__ import annotations

from cli_process import Cronplane


def test_add_with_labels_then_info_shows_them(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    added = cronplane(
        "schedule", "add", "nightly", "--job", "flush", "--cron", "@daily",
        "--label", "team=payments", "--label", "tier=batch", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    assert added.json()["labels"] == {"team": "payments", "tier": "batch"}  # type: ignore[index]
    info = cronplane("schedule", "info", "nightly")
    assert info.code == 0 and "team=payments, tier=batch" in info.stdout
    refused = cronplane(
        "schedule", "add", "other", "--job", "flush", "--cron", "@daily", "--label", "bad key=x"
    )
    assert refused.code == 2 and "X400007REQINV" in refused.stderr and "bad key" in refused.stderr
    not_a_pair = cronplane(
        "schedule", "add", "other", "--job", "flush", "--cron", "@daily", "--label", "team"
    )
    assert not_a_pair.code == 2 and "not KEY=VALUE" in not_a_pair.stderr
