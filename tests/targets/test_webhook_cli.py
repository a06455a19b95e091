"""`cronplane webhook secret|seal`, and the worker's default targets."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from cronplane.cli.main import cli
from cronplane.clock import FakeClock
from cronplane.processes.item_runner import default_targets
from cronplane.store.database import Database
from cronplane.targets.webhook import SecretKeyring
from firing_support import START

KEY = "cli-test-deployment-key-0123456789"


def test_secret_prints_the_derived_secret(sqlite_database: Database, tmp_path: Path) -> None:
    url = str(sqlite_database.engine.url)
    runner = CliRunner(env={"CRONPLANE_SECRET_KEY": KEY})
    scope = ["--db", url, "--tenant", "acme", "--stack", "billing"]
    added = runner.invoke(
        cli, [*scope, "job", "add", "hook", "--target", "webhook:http://127.0.0.1:9/h"]
    )
    assert added.exit_code == 0, added.output
    shown = runner.invoke(cli, [*scope, "webhook", "secret", "hook"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.strip() == SecretKeyring(KEY.encode()).job_secret("acme", "billing", "hook")
    missing = runner.invoke(cli, [*scope, "webhook", "secret", "nope"])
    # CliRunner calls the group, not main(): coded errors come back as the exception.
    assert "X404903JOBNFD" in str(missing.exception)
    unkeyed = CliRunner(env={"CRONPLANE_SECRET_KEY": ""})
    refused = unkeyed.invoke(cli, [*scope, "webhook", "secret", "hook"])
    assert "CRONPLANE_SECRET_KEY is not set" in str(refused.exception)


def test_seal_reads_standard_input() -> None:
    runner = CliRunner(env={"CRONPLANE_SECRET_KEY": KEY})
    sealed = runner.invoke(cli, ["webhook", "seal"], input="their-secret\n")
    assert sealed.exit_code == 0, sealed.output
    assert SecretKeyring(KEY.encode()).unseal(sealed.stdout.strip()) == "their-secret"


def test_default_worker_runs_every_kind(sqlite_database: Database) -> None:
    kinds = default_targets(sqlite_database, FakeClock(START)).kinds()
    assert kinds == ["celery", "command", "container", "python", "system", "temporal", "webhook"]
