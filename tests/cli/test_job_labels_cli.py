"""`job add --label KEY=VALUE` (repeatable), `job info`, `job ls -l SELECTOR` from the
installed command (issue 37, per job): a bad label or selector exits 2 with its code."""

from __future__ import annotations

import json

from cli_process import Cronplane


def test_job_labels_through_the_command(cronplane: Cronplane) -> None:
    added = cronplane(
        "job", "add", "flush", "--target", "python:app.jobs:flush",
        "--label", "team=payments", "--label", "tier=batch", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    assert added.json()["labels"] == {"team": "payments", "tier": "batch"}  # type: ignore[index]
    assert cronplane("job", "add", "plain", "--target", "python:app.jobs:plain").code == 0
    info = cronplane("job", "info", "flush")
    assert info.code == 0 and "team=payments, tier=batch" in info.stdout
    shown = json.loads(cronplane("job", "info", "flush", "--json").stdout)
    assert shown["labels"] == {"team": "payments", "tier": "batch"}
    listed = json.loads(cronplane("job", "ls", "--json").stdout)
    assert {j["name"]: j["labels"] for j in listed} == {
        "flush": {"team": "payments", "tier": "batch"},
        "plain": {},
    }
    chosen = cronplane("job", "ls", "-l", "team=payments,tier=batch", "--json")
    assert [j["name"] for j in json.loads(chosen.stdout)] == ["flush"]
    others = cronplane("job", "ls", "--selector", "!team", "--json")
    assert [j["name"] for j in json.loads(others.stdout)] == ["plain"]

    bad = cronplane("job", "add", "other", "--target", "python:app.jobs:o", "--label", "bad key=x")
    assert bad.code == 2 and "X400007REQINV" in bad.stderr and "bad key" in bad.stderr
    assert cronplane("job", "info", "other").code == 3  # nothing stored
    malformed = cronplane("job", "ls", "-l", "team in (")
    assert malformed.code == 2 and "X400007REQINV" in malformed.stderr
