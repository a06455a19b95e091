"""The CLI starts fast: commands that do not serve import only what they need.

A timing assertion would be flaky on a shared machine; which modules a
command loads is the durable guard (the figures are in docs/cli.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("fastapi", "uvicorn", "starlette", "sqlalchemy.orm", "httpx", "alembic")
# Runs the CLI's real main() in a fresh interpreter, then names the heavy modules loaded.
PROBE = """
import json, sys
args, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["cronplane", *args]
from cronplane.cli.main import main
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


def loaded(args: tuple[str, ...], heavy: tuple[str, ...], cwd: Path | None = None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(heavy)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stderr.splitlines()[-1])
    return found


@pytest.mark.parametrize(
    "args",
    [
        ("cron", "explain", "* * * * *"),
        ("cron", "next", "@daily", "--json"),
        ("cron", "explain", "every 5 minutes", "--tz", "Europe/Berlin", "--json"),
        ("--version",),
    ],
    ids=" ".join,
)
def test_trying_an_expression_imports_no_server_stack(args: tuple[str, ...]) -> None:
    assert loaded(args, HEAVY) == []


def test_the_probe_sees_what_a_database_command_loads(tmp_path: Path) -> None:
    """The guard can fail: a command that reads the database does load SQLAlchemy."""
    url = f"sqlite:///{tmp_path / 'x.db'}"
    assert loaded(("--db", url, "db", "upgrade"), ("sqlalchemy", "fastapi")) == ["sqlalchemy"]
