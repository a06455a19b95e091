"""`schedule versions|diff|rollback|restore` through the installed command (issue 38):
tables and --json, and each refusal's exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_process import Cronplane

from cronplane.clock import SystemClock
from cronplane.core.inputs import SchedulePatch
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store.database import Database

SCOPE = Scope("acme")


def _json(outcome: Any) -> Any:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()


def test_versions_diff_rollback_restore(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    add = ("schedule", "add", "nightly", "--job", "flush", "--cron", "0 2 * * *")
    assert cronplane(*add).code == 0
    assert (
        cronplane("schedule", "window", "nightly", "--max-runs", "7", "--reason", "cap").code == 0
    )
    listed = _json(cronplane("schedule", "versions", "nightly", "--json"))
    assert [v["number"] for v in listed] == [2, 1]
    assert {v["via"] for v in listed} == {"cli"} and listed[0]["actor"] == "cli:test"
    assert (listed[0]["reason"], listed[1]["reason"]) == ("cap", None)
    table = cronplane("schedule", "versions", "nightly")
    assert table.code == 0 and "0 2 * * *" in table.stdout and "cli:test" in table.stdout

    shown = cronplane("schedule", "diff", "nightly")
    assert shown.code == 0 and "version 1 -> version 2" in shown.stdout
    assert "max_runs" in shown.stdout and "02:00" in shown.stdout
    as_json = _json(cronplane("schedule", "diff", "nightly", "1", "2", "--json"))
    assert [c["field"] for c in as_json["changes"]] == ["max_runs"]
    assert len(as_json["runs"][0]) == 5

    dry = _json(cronplane("schedule", "rollback", "nightly", "--to", "1", "--dry-run", "--json"))
    assert dry["dry_run"] and dry["schedule"]["max_runs"] is None
    assert len(_json(cronplane("schedule", "versions", "nightly", "--json"))) == 2
    done = cronplane("schedule", "rollback", "nightly", "--to", "1", "--reason", "bad deploy")
    assert done.code == 0 and "rolled back to version 1" in done.stdout
    latest = _json(cronplane("schedule", "versions", "nightly", "--json"))[0]
    assert (latest["number"], latest["via"], latest["reason"]) == (3, "rollback", "bad deploy")

    assert cronplane("schedule", "rm", "nightly").code == 0
    back = _json(cronplane("schedule", "restore", "nightly", "--reason", "oops", "--json"))
    assert back["max_runs"] is None and back["next_run"] is not None
    numbers = [v["number"] for v in _json(cronplane("schedule", "versions", "nightly", "--json"))]
    assert numbers == [5, 4, 3, 2, 1]


def test_refusals_exit_with_their_codes(cronplane: Cronplane, tmp_path: Path) -> None:
    assert cronplane("job", "add", "flush", "--target", "python:app.jobs:flush").code == 0
    assert cronplane("job", "add", "other", "--target", "python:app.jobs:flush").code == 0
    add = ("schedule", "add", "nightly", "--job", "other", "--cron", "0 2 * * *")
    assert cronplane(*add).code == 0
    # The CLI edits no job, nor deactivates one: the service on the same file does.
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    service = ScheduleService(database, SystemClock())
    service.update_schedule(SCOPE, "nightly", SchedulePatch(job="flush"), actor="ops")
    unknown = cronplane("schedule", "rollback", "nightly", "--to", "9")
    assert unknown.code == 3 and "X404380VERNFD" in unknown.stderr
    stale = cronplane("schedule", "rollback", "nightly", "--to", "1", "--revision", "1")
    assert stale.code == 5 and "X412001REVSTL" in stale.stderr
    service.deactivate_job("acme", "default", "other", actor="ops")
    database.dispose()
    gone = cronplane("schedule", "rollback", "nightly", "--to", "1")
    assert gone.code == 4 and "X409380VERJOB" in gone.stderr
    taken = cronplane("schedule", "restore", "nightly")
    assert taken.code == 4 and "X409381RSTDPL" in taken.stderr
    nothing = cronplane("schedule", "restore", "never")
    assert nothing.code == 3 and "X404381RSTNON" in nothing.stderr
    assert len(_json(cronplane("schedule", "versions", "nightly", "--json"))) == 2
