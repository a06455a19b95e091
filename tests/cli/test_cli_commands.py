"""The operator CLI against real SQLite files: output, JSON, errors and exit codes."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_process import run_cronplane
from click.testing import CliRunner

from cronplane.cli.main import main
from spec_manifest import SPEC_MANIFEST

MANIFEST = SPEC_MANIFEST


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `cronplane ARGS` in-process through main() (the coded-error boundary)."""
    monkeypatch.chdir(tmp_path)
    env = {
        "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "CRONPLANE_TENANT": "acme",
        "CRONPLANE_STACK": None,
        "CRONPLANE_ENV": None,
        "CRONPLANE_ACTOR": "cli:test",
    }
    (tmp_path / "app.yaml").write_text(MANIFEST)

    def run(*args: str) -> Outcome:
        runner = CliRunner()
        with runner.isolation(env=env) as streams:
            sys.argv = ["cronplane", *args]
            try:
                main()
                code = 0
            except SystemExit as done:
                code = int(done.code or 0)
        return Outcome(code, streams[0].getvalue().decode(), streams[1].getvalue().decode())

    return run


def test_app_install_then_ls_json_keyed_by_spec_columns(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("app", "install", "app.yaml", "--env", "production", "--json")
    assert out.code == 0, out.stderr
    assert out.json()["summary"]["created"] == 2  # type: ignore[index]
    rows = cli("--stack", "billing", "--env", "production", "schedule", "ls", "--json").json()
    assert isinstance(rows, list) and [r["name"] for r in rows] == [
        "nightly-report",
        "send-invoices",
    ]
    assert {"name", "job", "cron", "timezone", "enabled", "source", "last_run", "next_run"} <= set(
        rows[0]
    )
    assert rows[0]["source"] == "app" and rows[0]["cron"] == "30 2 * * *"
    table = cli("schedule", "ls", "--stack", "billing", "--env", "production")
    assert (
        "Last Run" in table.stdout
        and "Next Run" in table.stdout
        and "nightly-report" in table.stdout
    )
    again = cli("app", "sync", "app.yaml", "--dry-run", "--env", "production", "--json").json()
    assert again["summary"]["unchanged"] == 2 and again["summary"]["created"] == 0  # type: ignore[index]


def test_global_options_work_before_or_after_the_subcommand(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("app", "install", "app.yaml", "--env", "staging").code == 0
    before = cli("--stack", "billing", "--env", "staging", "schedule", "ls", "--json").json()
    middle = cli("schedule", "--stack", "billing", "ls", "--env", "staging", "--json").json()
    after = cli("schedule", "ls", "--json", "--stack", "billing", "--env", "staging").json()
    assert before == middle == after and len(before) == 2  # type: ignore[arg-type]
    # The nearest flag wins over an earlier one.
    assert (
        cli(
            "--env",
            "production",
            "schedule",
            "ls",
            "--stack",
            "billing",
            "--env",
            "staging",
            "--json",
        ).json()
        == before
    )
    assert cli("schedule", "ls", "--stack", "billing", "--json").json() == []  # env "default"


def test_schedule_lifecycle_and_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    scope = ("--stack", "billing", "--env", "production")
    assert cli("app", "install", "app.yaml", "--env", "production").code == 0
    added = cli(
        *scope,
        "schedule",
        "add",
        "mine",
        "--job",
        "send-invoices",
        "--cron",
        "every 5 minutes",
        "--payload",
        '{"batch": 7}',
        "--json",
    )
    assert added.code == 0, added.stderr
    row = added.json()
    assert (
        row["cron"] == "*/5 * * * *" and row["payload"] == {"batch": 7} and row["source"] == "user"
    )  # type: ignore[index]
    info = cli(*scope, "schedule", "info", "mine", "--json", "--next", "3").json()
    assert len(info["upcoming"]) == 3 and info["description"]  # type: ignore[index]
    off = cli(*scope, "schedule", "disable", "mine", "--json").json()
    assert off["enabled"] is False and off["next_run"] is None  # type: ignore[index]
    assert cli(*scope, "schedule", "enable", "mine", "--json").json()["enabled"] is True  # type: ignore[index]
    history = cli(*scope, "schedule", "history", "mine", "--json").json()
    assert [e["code"] for e in history] == ["V200004SCHENA", "V200005SCHDIS", "V201001SCHCRT"]  # type: ignore[index,union-attr]
    assert history[0]["actor"] == "cli:test"  # type: ignore[index]

    cases = [
        (
            ("schedule", "add", "x", "--job", "send-invoices", "--cron", "61 * * * *"),
            2,
            "X400001CRNINV",
            "61 * * * *",
        ),
        (
            (
                "schedule",
                "add",
                "x",
                "--job",
                "send-invoices",
                "--cron",
                "@daily",
                "--payload",
                "[1]",
            ),
            2,
            "X400002PAYINV",
            "object",
        ),
        (
            (
                "schedule",
                "add",
                "x",
                "--job",
                "send-invoices",
                "--cron",
                "@daily",
                "--tz",
                "Mars/Base",
            ),
            2,
            "X400004ZONINV",
            "Mars",
        ),
        (
            ("schedule", "add", "x", "--job", "ghost", "--cron", "@daily"),
            3,
            "X404903JOBNFD",
            "ghost",
        ),
        (
            ("schedule", "add", "mine", "--job", "send-invoices", "--cron", "@daily"),
            4,
            "X409900SCHDPL",
            "mine",
        ),
        (("schedule", "rm", "nightly-report"), 4, "X409902APPOWN", "manifest"),
        (("schedule", "enable", "mine", "--revision", "1"), 5, "X412001REVSTL", "revision"),
        (("schedule", "info", "nope"), 3, "X404902SCHNFD", "nope"),
    ]
    for args, code, error, fragment in cases:
        out = cli(*scope, *args)
        assert (out.code, out.stderr.split(":")[0]) == (code, error), (args, out.stderr)
        assert fragment in out.stderr
    assert cli(*scope, "schedule", "rm", "mine").code == 0
    assert cli(*scope, "schedule", "info", "mine").code == 3


def test_jobs_and_uninstall(cli) -> None:  # type: ignore[no-untyped-def]
    added = cli(
        "--stack",
        "ops",
        "job",
        "add",
        "ping",
        "--target",
        "webhook:https://example.com/p",
        "--title",
        "Ping",
        "--json",
    )
    assert added.code == 0 and added.json()["kind"] == "webhook"  # type: ignore[index]
    assert cli("--stack", "ops", "job", "add", "ping", "--target", "celery:x").code == 4
    assert cli("--stack", "ops", "job", "add", "bad", "--target", "ftp:x").code == 2
    assert [j["name"] for j in cli("--stack", "ops", "job", "ls", "--json").json()] == ["ping"]  # type: ignore[union-attr,index]
    assert "Ping" in cli("--stack", "ops", "job", "ls").stdout
    cli("app", "install", "app.yaml", "--env", "production")
    gone = cli("app", "uninstall", "billing", "--env", "production", "--json").json()
    assert gone["summary"]["removed"] == 2 and len(gone["jobs_deactivated"]) == 2  # type: ignore[index]
    statuses = {j["status"] for j in cli("--stack", "billing", "job", "ls", "--json").json()}  # type: ignore[union-attr,index]
    assert statuses == {"inactive"}


def test_an_invalid_manifest_lists_every_problem(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.yaml").write_text(
        MANIFEST.replace("at 02:30", "at 25:00").replace("Europe/London", "Mars/X")
    )
    out = cli("app", "install", "bad.yaml")
    assert out.code == 2 and out.stderr.startswith("X400006MANINV")
    # Refused before the database was opened: not even its file was made.
    assert not (tmp_path / "cli.db").exists()
    # Under --json the refusal is the JSON body every surface answers.
    refused = cli("schedule", "ls", "--all", "--json")
    assert refused.code == 7 and json.loads(refused.stderr)["code"] == "X503001DBDOWN"


def test_the_installed_command_creates_a_sqlite_file_only_when_it_writes(
    tmp_path: Path,
) -> None:
    database = tmp_path / "fresh.db"
    env = {"CRONPLANE_DATABASE_URL": f"sqlite:///{database}", "HOME": str(tmp_path)}
    read = run_cronplane("schedule", "ls", "--json", env=env, cwd=tmp_path)
    assert read.code == 7 and json.loads(read.stderr)["code"] == "X503001DBDOWN", read.stderr
    assert str(database) in read.stderr and not database.exists()
    made = run_cronplane("db", "upgrade", env=env, cwd=tmp_path)
    assert made.code == 0 and "revision" in made.stdout
    assert made.stderr == f"creating a new SQLite database: {database}\n"
    assert run_cronplane("schedule", "ls", "--json", env=env, cwd=tmp_path).stdout.strip() == "[]"
    failed = run_cronplane("schedule", "info", "nope", env=env, cwd=tmp_path)
    assert failed.code == 3 and failed.stderr.startswith("X404902SCHNFD: ")
