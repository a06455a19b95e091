"""`--json` on every command, and the documented shapes of the ones that gained it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
from cli_process import Cronplane, run_cronplane

from cronplane.cli.main import cli


def leaves(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command's path, e.g. ("schedule", "ls")."""
    ctx = click.Context(group)
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found += leaves(command, (*path, name))
        else:
            found.append((*path, name))
    return found


LEAVES = leaves(cli)


def test_the_command_tree_is_walked() -> None:
    assert ("cron", "explain") in LEAVES and ("serve",) in LEAVES and len(LEAVES) >= 25


# One interpreter runs the real main() for every `PATH --help` (a process each is slow).
HELP_LOOP = """
import contextlib, io, json, sys
from cronplane.cli.main import main
missing = []
for path in json.loads(sys.argv[1]):
    sys.argv = ["cronplane", *path, "--help"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main()
        except SystemExit as done:
            assert not done.code, (path, done.code)
    if "--json" not in out.getvalue():
        missing.append(" ".join(path))
print(json.dumps(missing))
"""


def test_every_command_accepts_json(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HELP_LOOP, json.dumps(LEAVES)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], "commands without --json"


def test_json_shapes_of_cron_db_and_token(cronplane: Cronplane) -> None:
    nxt = cronplane("cron", "next", "@daily", "-n", "2", "--after", "2026-01-01T00:00", "--json")
    assert nxt.json() == {
        "expression": "@daily",
        "timezone": "UTC",
        "next": ["2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"],
    }
    explained = cronplane(
        "cron", "explain", "0 9 * * *", "--tz", "Europe/Berlin", "--after", "2026-01-01", "--json"
    ).json()
    assert isinstance(explained, dict)
    assert explained["normalized"] == "0 9 * * *" and explained["timezone"] == "Europe/Berlin"
    assert explained["next"][0] == {
        "local": "2026-01-01T09:00:00+01:00",
        "utc": "2026-01-01T08:00:00Z",
    }
    assert {"description", "dst_rule"} <= set(explained)
    upgraded = cronplane("db", "upgrade", "--json")
    assert upgraded.code == 0 and "creating a new SQLite database" in upgraded.stderr
    revision = upgraded.json()
    assert isinstance(revision, dict) and revision["revision"] == revision["head"]
    assert revision.pop("shards") == []  # the shards it upgraded too: none listed
    assert cronplane("db", "current", "--json").json() == {**revision, "current": True}
    created = cronplane("token", "create", "--tenant", "acme", "--role", "viewer", "--json")
    token = created.json()
    assert isinstance(token, dict) and token["token"].startswith(token["prefix"])
    assert token["tenant"] == "acme" and token["role"] == "viewer"
    revoked = cronplane("token", "revoke", token["id"], "--json").json()
    assert isinstance(revoked, dict) and revoked["id"] == token["id"] and revoked["revoked_at"]
    ran = cronplane("worker", "--once", "--json").json()
    assert ran == {"ran": False}
    report = cronplane("dispatcher", "--once", "--json").json()
    assert isinstance(report, dict) and report["leader"] is True and "counts" in report


def test_import_strict_exits_2_through_the_real_main(tmp_path: Path) -> None:
    """`raise Exit(2)` in a command used to be returned by click and dropped by main()."""
    targets = Path(__file__).parents[1] / "importers"
    path = os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(targets)])
    args = ("import", "celery-beat", "celery_app_beat:app")
    loose = run_cronplane(*args, "--json", env={"PYTHONPATH": path}, cwd=tmp_path)
    assert loose.code == 0, loose.stderr
    document = loose.json()
    assert isinstance(document, dict) and document["manifest"]["name"] == "billing"
    assert document["skipped"] and document["written"] is None
    strict = run_cronplane(*args, "--strict", env={"PYTHONPATH": path}, cwd=tmp_path)
    assert strict.code == 2 and "not translated" in strict.stderr
