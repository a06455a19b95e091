"""The console's run controls in Chromium: overlap and timeout in the editor, Cancel on a running item."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from ui_support import TENANT, World, add_job, add_schedule, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.model import Scope
from cronplane.service.base import Context
from cronplane.service.runs import RunService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_editor_sets_overlap_and_timeout(admin: Any, world: World) -> None:
    add_schedule(world, "controlled")
    admin.goto("/schedules/billing/prod/controlled/edit")
    admin.get_by_label("Overlap", exact=True).select_option("buffer_one")
    admin.get_by_label("Timeout (seconds)").fill("45")
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_contain_text("saved", ignore_case=True)
    expect(admin.get_by_label("Overlap", exact=True)).to_have_value("buffer_one")
    expect(admin.get_by_label("Timeout (seconds)")).to_have_value("45")
    admin.get_by_role("link", name="Edit", exact=True).click()
    admin.get_by_label("Timeout (seconds)").fill("0")
    admin.get_by_role("button", name="Save").click()
    expect(admin.locator("body")).to_contain_text("X400007REQINV")


def test_cancel_asks_a_running_item_to_stop(page: Any, world: World) -> None:
    add_job(world, "billing", "lingering", "python:ui_handlers:lingering", {})
    add_schedule(world, "lingering", job="lingering")
    runs = RunService(Context(world.database, SystemClock()))
    item = runs.run_now(Scope(TENANT, "billing", "prod"), "lingering", actor="test")
    sign_in(page, world, Role.OPERATOR)
    running = page.locator(f"#item-{item.id}[data-status='running']")
    for _ in range(40):
        page.goto("/jobs")
        if running.count():
            break
        page.wait_for_timeout(250)
    expect(running).to_have_count(1)
    running.get_by_role("button", name=re.compile("^Cancel item")).click()
    expect(page.get_by_role("status")).to_contain_text("Stop requested")
    asked = runs.get_item(TENANT, item.id)
    assert asked.cancel_requested_at is not None and asked.cancelled_by is not None
    expect(page.locator(f"#item-{item.id}")).to_contain_text("stop requested by")
    done = runs.wait(TENANT, item.id, timeout=20)
    assert done.status == "cancelled"
