"""What `schedule ls` and `schedule info` say when the scope holds nothing, and
`info` on a row whose stored cron no longer parses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import Cronplane, run_cronplane
from live_server import serving

from cronplane.clock import SystemClock
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database
from firing_support import add_job, add_schedule


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    add_job(database, stack="billing")
    add_job(database, stack="shop")
    add_schedule(database, "nightly", stack="billing")
    add_schedule(database, "hourly", stack="billing")
    add_schedule(database, "nightly", stack="shop")
    yield database
    database.dispose()


def test_an_empty_listing_says_where_the_tenants_schedules_are(
    db: Database, cronplane: Cronplane
) -> None:
    empty = cronplane("schedule", "ls", "--json")
    assert empty.code == 0 and empty.json() == []
    assert "the tenant has 3 in other stacks/environments" in empty.stderr
    assert "billing/default: 2, shop/default: 1" in empty.stderr and "--all" in empty.stderr
    # Filters count as the listing does; a tenant with nothing anywhere gets no hint.
    assert cronplane("schedule", "ls", "--disabled").stderr == ""
    assert cronplane("schedule", "ls", "--tenant", "other").stderr == ""
    assert cronplane("schedule", "ls", "--stack", "shop").stderr == ""


def test_info_not_found_names_the_stacks_where_the_name_exists(
    db: Database, cronplane: Cronplane, tmp_path: Path
) -> None:
    out = cronplane("schedule", "info", "nightly")
    assert out.code == 3 and out.stderr.startswith("X404902SCHNFD: ")
    assert "'nightly' exists in --stack billing --env default, --stack shop --env default" in (
        out.stderr
    )
    assert "exists in" not in cronplane("schedule", "info", "nope").stderr
    token = TokenService(Context(db, SystemClock())).create(tenant="acme", role="viewer", actor="t")
    with serving(db) as url:
        remote = run_cronplane(
            "schedule",
            "info",
            "hourly",
            env={"CRONPLANE_URL": url, "CRONPLANE_TOKEN": token.secret, "CRONPLANE_TENANT": "acme"},
            cwd=tmp_path,
        )
    assert remote.code == 3 and "'hourly' exists in --stack billing --env default" in remote.stderr


def test_info_shows_a_row_whose_stored_cron_no_longer_parses(
    db: Database, cronplane: Cronplane
) -> None:
    add_schedule(db, "broken", stack="billing", cron="61 * * * *", enabled=False)
    table = cronplane("schedule", "info", "broken", "--stack", "billing")
    assert table.code == 0, table.stderr
    assert "61 * * * *" in table.stdout and "Cron error" in table.stdout
    assert "X400003INVSCH" in table.stdout
    document = cronplane("schedule", "info", "broken", "--stack", "billing", "--json").json()
    assert isinstance(document, dict) and document["name"] == "broken"
    assert document["cron_error"].startswith("X400003INVSCH") and document["enabled"] is False


def test_uninstall_dry_run_names_the_jobs_the_real_run_deactivates(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    (tmp_path / "app.yaml").write_text(
        "name: shop\njobs:\n  pack: {target: 'python:a:b'}\ncrons:\n  nightly: {job: pack, cron: '@daily'}\n"
    )
    assert cronplane("app", "install", "app.yaml", "--env", "prod").code == 0
    dry = cronplane("app", "uninstall", "shop", "--env", "prod", "--dry-run", "--json").json()
    real = cronplane("app", "uninstall", "shop", "--env", "prod", "--json").json()
    assert isinstance(dry, dict) and isinstance(real, dict)
    assert dry["jobs_deactivated"] == real["jobs_deactivated"] == ["pack"]
    assert dry["plan"] == real["plan"] and dry["dry_run"] is True
