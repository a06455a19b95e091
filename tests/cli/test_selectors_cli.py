"""`schedule ls -l SELECTOR -q TEXT [--all-stacks]` from the installed command (issue 37),
against SQLite and PostgreSQL: the selection listed, a bad selector refused with its
code and exit 2."""

from __future__ import annotations

from pathlib import Path

from cli_process import Cronplane, Outcome, run_cronplane

from cronplane.store.database import Database


def _cli(database: Database, tmp_path: Path) -> Cronplane:
    def run(*args: str) -> Outcome:
        env = {
            "CRONPLANE_DATABASE_URL": database.url,
            "CRONPLANE_TENANT": "acme",
            "CRONPLANE_ACTOR": "cli:test",
        }
        return run_cronplane(*args, env=env, cwd=tmp_path)

    return run


def _names(outcome: Outcome) -> list[str]:
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()
    assert isinstance(rows, list)
    return [row["name"] for row in rows]


def test_ls_by_selector_and_search(database: Database, tmp_path: Path) -> None:
    cli = _cli(database, tmp_path)
    assert cli("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    assert (
        cli("job", "add", "flush", "--target", "python:app.jobs:flush", "--stack", "web").code == 0
    )
    for name, stack, labels in (
        ("a", "default", ["team=pay", "tier=batch"]),
        ("b", "default", ["team=ops"]),
        ("c", "web", ["team=pay"]),
    ):
        flags = [part for label in labels for part in ("--label", label)]
        added = cli(
            "schedule", "add", name, "--job", "flush", "--cron", "@daily", "--stack", stack, *flags
        )
        assert added.code == 0, added.stderr
    assert _names(cli("schedule", "ls", "-l", "team=pay", "--json")) == ["a"]
    assert _names(cli("schedule", "ls", "-l", "team=pay", "--all-stacks", "--json")) == ["a", "c"]
    assert _names(cli("schedule", "ls", "--selector", "team,!tier", "--all", "--json")) == [
        "b",
        "c",
    ]
    assert _names(cli("schedule", "ls", "-q", "OPS", "--json")) == ["b"]
    assert _names(cli("schedule", "ls", "-q", "pay", "-l", "tier", "--all-stacks", "--json")) == [
        "a"
    ]
    table = cli("schedule", "ls", "-l", "team in (ops)")
    assert table.code == 0 and " b " in f" {table.stdout} " and "flush" in table.stdout
    refused = cli("schedule", "ls", "-l", "team in (ops")
    assert refused.code == 2 and "X400007REQINV" in refused.stderr
    assert "at character 13" in refused.stderr
