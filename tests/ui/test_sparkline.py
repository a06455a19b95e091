"""The listing's sparkline: each row's recent runs at a glance, drawn by the server."""

from __future__ import annotations

import os
import re
import time
from typing import Any

import pytest
from ui_support import TENANT, World, add_schedule

from cronplane.clock import SystemClock
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_a_row_shows_its_recent_runs_and_one_that_never_ran_none(admin: Any, world: World) -> None:
    add_schedule(world, "zz-spark-runs")
    add_schedule(world, "zz-spark-idle")
    service = ScheduleService(world.database, SystemClock())
    scope = Scope(TENANT, "billing", "prod")
    for _ in range(3):
        service.run_now(scope, "zz-spark-runs", actor="test")

    admin.goto("/?q=zz-spark")
    row = admin.locator("#schedules tr[data-name='zz-spark-runs']")
    spark = row.get_by_role("img", name=re.compile("^The last 3 occurrences"))
    expect(spark).to_be_visible()
    expect(spark.locator("g.mark")).to_have_count(3)
    expect(spark.locator("g.mark title").first).to_contain_text("manual")
    # The world's worker runs them (build-report succeeds): once the record says so,
    # the bars are green.
    row_id = service.get_schedule(scope, "zz-spark-runs").id
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        items = service.runs.recent_items(TENANT, [row_id])[row_id]
        if all(item.status == "succeeded" for item in items):
            break
        time.sleep(0.2)
    admin.reload()
    expect(spark.locator("g.mark.tone-ok")).to_have_count(3)
    idle = admin.locator("#schedules tr[data-name='zz-spark-idle']")
    expect(idle.locator("svg.sparkline")).to_have_count(0)
    row.get_by_role("link", name="Recent runs of zz-spark-runs").click()
    expect(admin).to_have_url(re.compile(r"/schedules/billing/prod/zz-spark-runs\?tab=history$"))
