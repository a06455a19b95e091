"""Fixtures of the CLI tests: the installed command in a subprocess (cli_process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import Cronplane, Outcome, run_cronplane


@pytest.fixture
def cronplane(tmp_path: Path) -> Cronplane:
    """`cronplane(*args, **env)` against a SQLite file in tmp_path, tenant acme."""

    def run(*args: str, timeout: float = 120, **env: str | None) -> Outcome:
        defaults: dict[str, str | None] = {
            "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
            "CRONPLANE_TENANT": "acme",
            "CRONPLANE_ACTOR": "cli:test",
        }
        return run_cronplane(*args, env={**defaults, **env}, cwd=tmp_path, timeout=timeout)

    return run
