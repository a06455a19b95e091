"""`schedule pause|resume|enable|disable|run -l SELECTOR [-q TEXT] [--dry-run] [--yes]`
from the installed command (issue 37), on SQLite and PostgreSQL: the report's lines and
counts, a dry run that changes nothing, a refused row's exit code, and the usage errors."""

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


def _report(outcome: Outcome) -> dict[str, object]:
    assert outcome.code == 0, outcome.stderr
    report = outcome.json()
    assert isinstance(report, dict)
    return report


def test_actions_by_selector(database: Database, tmp_path: Path) -> None:
    cli = _cli(database, tmp_path)
    assert cli("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    assert cli("job", "add", "old", "--target", "python:app.jobs:old").code == 0
    for name, job, team in (("a", "flush", "pay"), ("b", "flush", "pay"), ("c", "old", "pay")):
        added = cli(
            "schedule", "add", name, "--job", job, "--cron", "@daily", "--label", f"team={team}"
        )
        assert added.code == 0, added.stderr
    dry = cli("schedule", "pause", "-l", "team=pay", "--dry-run")
    assert dry.code == 0, dry.stderr
    assert "would change default/default/a" in dry.stdout
    assert dry.stdout.strip().endswith("pause (dry run): 3 would change, 0 refused, 0 already")
    assert "paused" not in cli("schedule", "info", "a").stdout.lower()
    paused = _report(
        cli("schedule", "pause", "-l", "team=pay", "-q", "flush", "--note", "mig", "--json")
    )
    assert (paused["selected"], paused["changed"], paused["already"]) == (2, 2, 0)
    again = cli("schedule", "pause", "-l", "team=pay")
    assert again.code == 0 and again.stdout.strip().endswith("1 changed, 0 refused, 2 already")
    resumed = _report(cli("schedule", "resume", "-l", "team", "--missed", "skip", "--json"))
    assert resumed["changed"] == 3
    assert _report(cli("schedule", "disable", "-q", "old", "--json"))["changed"] == 1
    assert _report(cli("schedule", "enable", "-l", "team=pay", "--yes", "--json"))["already"] == 2
    # Past the tenant's queue quota a row refuses its run: listed, the others run, exit 9.
    assert cli("tenant", "set-quota", "acme", "--max-queued", "2").code == 0
    ran = cli("schedule", "run", "-l", "team=pay")
    assert ran.code == 9, ran.stdout + ran.stderr
    assert "refused      default/default/c" in ran.stdout and "X429260QTAQUE" in ran.stdout
    assert ran.stdout.strip().endswith("run: 2 changed, 1 refused, 0 already")
    # Usage: NAME or a selection, not both, not neither; one row's options stay one row's.
    for args in (("pause",), ("pause", "a", "-l", "team"), ("run", "-l", "team", "--wait")):
        refused = cli("schedule", *args)
        assert refused.code == 2, (args, refused.stderr)
    bad = cli("schedule", "disable", "-l", "team in (pay")
    assert bad.code == 2 and "X400007REQINV" in bad.stderr
