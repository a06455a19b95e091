"""The CLI against a real server (uvicorn on loopback) answers as it does against a database.

One scenario of commands runs twice: locally (CRONPLANE_DATABASE_URL) and
remotely (CRONPLANE_URL + CRONPLANE_TOKEN, the server over SQLite or
PostgreSQL). Exit codes, JSON output and error lines must match once ids,
timestamps and actors are masked.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from live_server import serving

from cronplane.cli.main import main
from cronplane.clock import SystemClock
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

MANIFEST = """
name: shop
jobs:
  pack:
    title: Pack orders
    target: python:shop.jobs:pack
    payload: {batch: 10}
  report: {title: Report, target: "python:shop.jobs:report"}
crons:
  pack: "*/15 * * * *"
  nightly:
    job: report
    cron: "at 02:30"
    timezone: Europe/London
"""

SCOPE = ("--stack", "shop", "--env", "prod")
LIMITED = (
    "schedule add limited --job ship --cron @daily --tz Europe/Berlin "
    "--start-at 2030-01-01T00:00 --end-at 2030-06-01T00:00Z --max-runs 3"
)
BACKWARDS = "--start-at 2030-01-02T00:00 --end-at 2030-01-01T00:00"
SCENARIO: list[tuple[str, ...]] = [
    ("job", "ls", "--json", *SCOPE),
    ("app", "install", "app.yaml", "--dry-run", "--json", *SCOPE),
    ("app", "install", "app.yaml", "--json", *SCOPE),
    ("app", "install", "app.yaml", "--json", *SCOPE),
    ("app", "sync", "app.yaml", "--dry-run", "--json", *SCOPE),
    ("job", "ls", "--json", *SCOPE),
    ("job", "add", "ship", "--target", "webhook:https://example.com/ship", "--json", *SCOPE),
    ("job", "add", "ship", "--target", "python:a:b", *SCOPE),
    ("job", "add", "bad", "--target", "ftp:nope", *SCOPE),
    ("schedule", "add", "hourly", "--job", "ship", "--cron", "@hourly", "--json", *SCOPE),
    ("schedule", "add", "hourly", "--job", "ship", "--cron", "@hourly", *SCOPE),
    ("schedule", "add", "broken", "--job", "ship", "--cron", "61 * * * *", *SCOPE),
    ("schedule", "add", "ghost", "--job", "nobody", "--cron", "@daily", *SCOPE),
    ("schedule", "add", "zoned", "--job", "ship", "--cron", "@daily", "--tz", "Mars/X", *SCOPE),
    # The active window, the run limit and a one-off (docs/controls.md).
    (*LIMITED.split(), "--json", *SCOPE),
    (
        *["schedule", "add", "backwards", "--job", "ship", "--cron", "@daily"],
        *BACKWARDS.split(),
        *SCOPE,
    ),
    ("schedule", "add", "launch", "--job", "ship", "--cron", "once at 2030-01-01T03:00", *SCOPE),
    ("schedule", "add", "late", "--job", "ship", "--cron", "once at 2020-01-01T03:00", *SCOPE),
    (
        *["schedule", "window", "limited", "--max-runs", "none", "--end-at", "none", "--json"],
        *SCOPE,
    ),
    (*["schedule", "window", "limited", "--max-runs", "0"], *SCOPE),
    ("schedule", "info", "limited", *SCOPE),
    ("schedule", "ls", "--json", *SCOPE),
    ("schedule", "ls", "--all", "--json"),
    ("schedule", "ls", "--limit", "1", "--json", *SCOPE),
    # Labels, selectors and search (issue 37).
    (
        *["schedule", "add", "tagged", "--job", "ship", "--cron", "@daily"],
        *["--label", "team=pay", "--label", "tier=web", "--json", *SCOPE],
    ),
    ("schedule", "ls", "-l", "team=pay,tier in (web)", "-q", "DAILY", "--json", *SCOPE),
    ("schedule", "ls", "--all-stacks", "-l", "!team", "--json"),
    ("schedule", "ls", "-l", "team in (pay", *SCOPE),
    ("schedule", "pause", "-l", "team=pay", "--dry-run", "--json", *SCOPE),
    ("schedule", "pause", "-l", "team=pay", "-q", "daily", "--note", "migration", *SCOPE),
    ("schedule", "resume", "--all-stacks", "-l", "team", "--json"),
    ("schedule", "disable", "-l", "tier notin (web)", "--json", *SCOPE),
    ("schedule", "enable", *SCOPE),
    ("schedule", "info", "hourly", "--json", *SCOPE),
    ("schedule", "disable", "hourly", "--json", *SCOPE),
    ("schedule", "enable", "hourly", "--revision", "1", *SCOPE),
    ("schedule", "enable", "hourly", "--revision", "2", "--json", *SCOPE),
    ("schedule", "pause", "hourly", "--note", "freeze", "--until", "2099-01-01T00:00", *SCOPE),
    ("schedule", "pause", "hourly", "--until", "yesterday", *SCOPE),
    ("schedule", "pause", "hourly", "--missed", "all", *SCOPE),
    ("schedule", "pause", "hourly", "--until", "2099-01-01T00:00", "--missed", "all", *SCOPE),
    ("schedule", "pause", "hourly", "--until", "2099-01-01T00:00", "--missed", "once", *SCOPE),
    ("schedule", "info", "hourly", "--json", *SCOPE),
    ("schedule", "resume", "hourly", "--json", *SCOPE),
    (
        "schedule",
        "backfill",
        "hourly",
        "--from",
        "2026-01-01T00:00Z",
        "--to",
        "2026-01-01T03:00Z",
        "--dry-run",
        *SCOPE,
    ),
    (
        "schedule",
        "backfill",
        "hourly",
        "--from",
        "2026-01-01T00:00Z",
        "--to",
        "2026-01-01T03:00Z",
        "--json",
        *SCOPE,
    ),
    (
        "schedule",
        "backfill",
        "hourly",
        "--from",
        "2026-01-01T02:00Z",
        "--to",
        "2026-01-01T00:00Z",
        *SCOPE,
    ),
    ("schedule", "add", "spread", "--job", "ship", "--cron", "@hourly", "--jitter", "3600", *SCOPE),
    ("schedule", "history", "hourly", "--json", *SCOPE),
    ("schedule", "rm", "pack", *SCOPE),
    ("schedule", "reset", "pack", "--json", *SCOPE),
    ("schedule", "reset", "hourly", *SCOPE),
    ("schedule", "rm", "hourly", *SCOPE),
    ("schedule", "info", "hourly", *SCOPE),
    # Business calendars (issue 36): saved, excluded by a schedule, kept while excluded.
    ("calendar", "add", "weekends", "--weekly", "sat,sun", "--json"),
    ("calendar", "add", "bad", "--holidays", "Atlantis"),
    (
        *["schedule", "add", "weekday", "--job", "ship", "--cron", "0 9 * * *"],
        *["--exclude", "weekends", "--on-excluded", "next", "--json"],
        *SCOPE,
    ),
    ("schedule", "info", "weekday", "--json", *SCOPE),
    ("calendar", "show", "weekends", "--json"),
    ("calendar", "rm", "weekends"),
    ("calendar", "ls", "--json"),
    ("calendar", "show", "nope"),
    # Alerts: channels (a secret in clear refused, never echoed), rules, alerts.
    (
        "alert",
        "channel",
        "add",
        "hook",
        "--kind",
        "webhook",
        "--url",
        "http://127.0.0.1:9/h",
        "--secret",
        "whsec_in_clear",
    ),
    (
        "alert",
        "channel",
        "add",
        "mail",
        "--kind",
        "email",
        "--host",
        "127.0.0.1",
        "--sender",
        "cron@example.com",
        "--to",
        "ops@example.com",
        "--json",
    ),
    ("alert", "channel", "ls", "--json"),
    ("alert", "rule", "add", "slow", "--condition", "late", "--channel", "mail", *SCOPE),
    (
        "alert",
        "rule",
        "add",
        "slow",
        "--condition",
        "late",
        "--threshold",
        "120",
        "--schedule",
        "pack",
        "--channel",
        "mail",
        "--json",
        *SCOPE,
    ),
    ("alert", "rule", "add", "slow", "--condition", "failed", "--channel", "mail"),
    ("alert", "rule", "add", "other", "--condition", "failed", "--channel", "nowhere"),
    ("alert", "rule", "ls", "--json"),
    ("alert", "ls", "--all", "--json"),
    ("alert", "ack", "00000000-0000-0000-0000-000000000001"),
    ("alert", "channel", "rm", "mail"),
    ("alert", "rule", "rm", "slow", "--json"),
    ("alert", "rule", "rm", "slow"),
    ("alert", "channel", "rm", "mail", "--json"),
    ("app", "uninstall", "shop", "--dry-run", "--json", *SCOPE),
    ("app", "uninstall", "shop", "--json", *SCOPE),
    ("schedule", "ls", "--json", *SCOPE),
    ("job", "ls", "--json", "--status", "inactive", *SCOPE),
]

_MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>"),
    (
        re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00|Z|[+-]\d\d:\d\d)?"),
        "<time>",
    ),
    (re.compile(r'"actor": "[^"]*"'), '"actor": "<actor>"'),
    (re.compile(r'"paused_by": "[^"]*"'), '"paused_by": "<actor>"'),
    (re.compile(r'"created_by": "[^"]*"'), '"created_by": "<actor>"'),
    (re.compile(r'"updated_by": "[^"]*"'), '"updated_by": "<actor>"'),
    (re.compile(r'by (cli|token):[^\s"]+'), "by <actor>"),
    # Event ids count every event of the database (the server's also has its token's).
    (re.compile(r'"id": \d+'), '"id": 0'),
    # A cursor encodes the row's key (the same on both sides), but be safe.
    (re.compile(r'"next_cursor": "[^"]*"'), '"next_cursor": "<cursor>"'),
]


def mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def run_scenario(env: dict[str, str | None], folder: Path) -> list[tuple[int, str, str]]:
    (folder / "app.yaml").write_text(MANIFEST)
    outcomes = []
    for args in SCENARIO:
        runner = CliRunner()
        with runner.isolation(env={"CRONPLANE_TENANT": "acme", **env}) as streams:
            sys.argv = ["cronplane", *args]
            try:
                main()
                code = 0
            except SystemExit as done:
                code = int(done.code or 0)
        outcomes.append(
            (code, mask(streams[0].getvalue().decode()), mask(streams[1].getvalue().decode()))
        )
    return outcomes


def test_remote_cli_matches_local(
    database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Database(f"sqlite:///{tmp_path / 'local.db'}").upgrade()  # reads never create one
    local = run_scenario(
        {
            "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'local.db'}",
            "CRONPLANE_URL": None,
            "CRONPLANE_TOKEN": None,
            "CRONPLANE_ACTOR": "cli:test",
        },
        tmp_path,
    )
    token = TokenService(Context(database, SystemClock())).create(
        tenant="acme", role="admin", actor="t"
    )
    with serving(database) as url:
        remote = run_scenario(
            {
                # A database URL that would fail if used: the remote path must not touch it.
                "CRONPLANE_DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:1/none",
                "CRONPLANE_URL": url,
                "CRONPLANE_TOKEN": token.secret,
            },
            tmp_path,
        )
    assert [o[0] for o in local] != [0] * len(SCENARIO), "the scenario must exercise errors"
    for args, mine, theirs in zip(SCENARIO, local, remote, strict=True):
        # JSON documents compare as values: PostgreSQL's JSONB orders keys its own way.
        if theirs[0] == mine[0] and _parsed(theirs[1]) == _parsed(mine[1]) and theirs[2] == mine[2]:
            continue
        if theirs != mine:
            diff = difflib.unified_diff(
                mine[1].splitlines() + mine[2].splitlines(),
                theirs[1].splitlines() + theirs[2].splitlines(),
                "local",
                "remote",
                lineterm="",
            )
            pytest.fail(f"{' '.join(args)}: exit {mine[0]} vs {theirs[0]}\n" + "\n".join(diff))


def test_remote_cli_without_a_token_or_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    database = Database(f"sqlite:///{tmp_path / 'server.db'}")
    database.upgrade()
    with serving(database) as url:
        [(code, _, err)] = _one(("schedule", "ls"), {"CRONPLANE_URL": url, "CRONPLANE_TOKEN": None})
        assert code == 6 and err.startswith("X401001AUTHRQ")
        answer = httpx.get(url + "/healthz")
        assert answer.json()["status"] == "ok"
    [(code, _, err)] = _one(("schedule", "ls"), {"CRONPLANE_URL": "http://127.0.0.1:9"})
    assert code == 7 and err.startswith("X503001DBDOWN")


def _parsed(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _one(args: tuple[str, ...], env: dict[str, str | None]) -> list[tuple[int, str, str]]:
    runner = CliRunner()
    with runner.isolation(env={"CRONPLANE_TENANT": "acme", **env}) as streams:
        sys.argv = ["cronplane", *args]
        try:
            main()
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    return [(code, streams[0].getvalue().decode(), streams[1].getvalue().decode())]
