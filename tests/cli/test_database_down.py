"""A database that cannot be reached or does not exist: every command answers
X503001DBDOWN, exit 7, one line naming the URL without its password; a command
that only reads never creates a SQLite file or folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import run_cronplane

# One invocation of every command that opens the database.
COMMANDS: list[tuple[str, ...]] = [
    ("schedule", "ls"),
    ("schedule", "ls", "--json"),
    ("schedule", "info", "x"),
    ("schedule", "history", "x"),
    ("schedule", "add", "x", "--job", "j", "--cron", "@daily"),
    ("schedule", "enable", "x"),
    ("schedule", "disable", "x"),
    ("schedule", "rm", "x"),
    ("schedule", "reset", "x"),
    ("schedule", "run", "x"),
    ("job", "ls"),
    ("job", "add", "j", "--target", "python:a:b"),
    ("app", "install", "app.yaml"),
    ("app", "sync", "app.yaml", "--dry-run"),
    ("app", "uninstall", "shop"),
    ("queue", "ls"),
    ("queue", "info", "0196a3f2-0000-7000-8000-000000000000"),
    ("queue", "cancel", "0196a3f2-0000-7000-8000-000000000000"),
    ("token", "ls"),
    ("token", "create", "--tenant", "acme", "--role", "viewer"),
    ("token", "revoke", "0196a3f2-0000-7000-8000-000000000000"),
    ("db", "current"),
    ("db", "upgrade"),
    ("dispatcher", "--once"),
    ("worker", "--once"),
    ("serve", "--port", "1"),
]
READS = [c for c in COMMANDS if c[:2] in {("schedule", "ls"), ("schedule", "info")}] + [
    ("schedule", "history", "x"),
    ("job", "ls"),
    ("queue", "ls"),
    ("token", "ls"),
    ("db", "current"),
    ("app", "sync", "app.yaml", "--dry-run"),
]
# The closed port covers every command; the other failures take the same path.
SAMPLE = [COMMANDS[0], COMMANDS[4], ("token", "create", "--tenant", "acme", "--role", "viewer")]
SAMPLE += [("db", "upgrade"), ("dispatcher", "--once")]
MANIFEST = "name: shop\njobs:\n  j: {target: 'python:a:b'}\ncrons:\n  x: {job: j, cron: '@daily'}\n"


def _assert_down(args: tuple[str, ...], url: str, shown: str, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(MANIFEST)
    out = run_cronplane(
        *args, env={"CRONPLANE_DATABASE_URL": url, "CRONPLANE_TENANT": "acme"}, cwd=tmp_path
    )
    assert out.code == 7, (args, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1, (args, out.stderr)
    if "--json" in args:  # the refusal is the JSON body (code, message, detail)
        assert json.loads(lines[0])["code"] == "X503001DBDOWN", (args, out.stderr)
    else:
        assert lines[0].startswith("X503001DBDOWN: "), (args, out.stderr)
    assert shown in lines[0] and "secret" not in out.stderr, (args, lines[0])
    assert out.stdout == ""


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_postgres_on_a_closed_port(args: tuple[str, ...], tmp_path: Path) -> None:
    url = "postgresql://cron:secret@127.0.0.1:1/cronplane"
    _assert_down(args, url, "postgresql+psycopg://cron:***@127.0.0.1:1/cronplane", tmp_path)


@pytest.mark.postgres
@pytest.mark.parametrize("args", SAMPLE[:3], ids=" ".join)
def test_postgres_database_that_does_not_exist(
    args: tuple[str, ...], tmp_path: Path, pg_admin_url: str
) -> None:
    url = pg_admin_url.rsplit("/", 1)[0] + "/cronplane_no_such_database"
    _assert_down(args, url, "/cronplane_no_such_database", tmp_path)


@pytest.mark.parametrize("args", SAMPLE, ids=" ".join)
def test_sqlite_in_a_missing_folder(args: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "missing" / "cronplane.db"
    _assert_down(args, f"sqlite:///{path}", str(path.parent), tmp_path)
    assert not path.parent.exists()


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_read_never_creates_the_sqlite_file(args: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    _assert_down(args, f"sqlite:///{path}", str(path), tmp_path)
    assert not path.exists()
