"""Labels in the console (issue 37), in Chromium: a row's label chips filter the listing
by selector, and "Pause all" pauses every schedule the selector names (not just the page),
each row one change; a viewer sees no selection actions."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from ui_support import TENANT, World, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

SCOPE = Scope(TENANT, "billing", "prod")


def _labelled(world: World, name: str, **labels: str) -> None:
    spec = ScheduleSpec(job="build-report", cron="0 3 * * *", name=name, labels=labels)
    ScheduleService(world.database, SystemClock()).create_schedule(SCOPE, spec, actor="test")


def test_a_chip_filters_by_label_and_pause_all_pauses_the_selection(
    page: Any, world: World
) -> None:
    _labelled(world, "zz-pay-a", team="zz-sel-pay", tier="batch")
    _labelled(world, "zz-pay-b", team="zz-sel-pay")
    _labelled(world, "zz-ops", team="zz-sel-ops")
    sign_in(page, world, Role.EDITOR)
    page.goto("/?q=zz-")
    row = page.locator("#schedules tr[data-name='zz-pay-a']")
    row.get_by_role("link", name="team=zz-sel-pay").click()
    expect(page).to_have_url(re.compile(r"selector=team%3Dzz-sel-pay"))
    expect(page.get_by_label("Labels")).to_have_value("team=zz-sel-pay")
    names = page.locator("#schedules tbody tr[data-name]")
    expect(names).to_have_count(2)
    expect(page.locator("#schedules tr[data-name='zz-ops']")).to_have_count(0)

    page.get_by_role("group", name="Actions on every matching schedule").get_by_role(
        "button", name="Pause all"
    ).click()
    expect(page.get_by_role("status")).to_have_text("Paused 2 schedules.")
    service = ScheduleService(world.database, SystemClock())
    assert [service.get_schedule(SCOPE, n).paused for n in ("zz-pay-a", "zz-pay-b")] == [
        True,
        True,
    ]
    assert not service.get_schedule(SCOPE, "zz-ops").paused
    # Each row is its own change, its event carrying the selector.
    events = service.schedule_history(SCOPE, "zz-pay-b", limit=5)
    paused = next(e for e in events if e.code == "V200101SCHPAU")
    assert paused.detail.get("selector") == "team=zz-sel-pay"

    page.get_by_role("button", name="Pause all").click()  # again: all were paused already
    expect(page.get_by_role("status")).to_have_text("Paused 0 schedules; 2 already paused.")


def test_a_viewer_filters_by_chip_but_has_no_selection_actions(page: Any, world: World) -> None:
    _labelled(world, "zz-viewed", team="zz-sel-data")
    sign_in(page, world, Role.VIEWER)
    page.goto("/?selector=team%3Dzz-sel-data")
    expect(page.locator("#schedules tbody tr[data-name]")).to_have_count(1)
    expect(page.get_by_role("button", name="Pause all")).to_have_count(0)
