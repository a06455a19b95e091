"""The console's Pause dialog takes what the pause passed becomes when it ends by itself
(issue 36: a select like Resume's), in Debian's Chromium (Playwright)."""

from __future__ import annotations

import os
import re
from datetime import timedelta
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


def _row(world: World, name: str) -> Any:
    service = ScheduleService(world.database, SystemClock())
    return service.get_schedule(Scope(TENANT, "billing", "prod"), name)


def _dialog(admin: Any, name: str) -> Any:
    admin.goto(f"/schedules/billing/prod/{name}")
    admin.get_by_role("button", name="Pause").click()
    return admin.get_by_role("dialog", name=re.compile(f"Pause .{name}."))


def test_pause_until_with_run_each_it_passed(admin: Any, world: World) -> None:
    add_schedule(world, "zz-pause-missed-all", cron="0 * * * *")
    dialog = _dialog(admin, "zz-pause-missed-all")
    until = (SystemClock().now() + timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M")
    dialog.get_by_label(re.compile("Resume by itself at")).fill(until)
    dialog.get_by_label(re.compile("When it resumes by itself")).select_option("all")
    dialog.get_by_role("button", name="Pause").click()
    expect(admin.get_by_role("status")).to_have_text(
        "Paused; when it resumes by itself, missed: all."
    )
    expect(admin.locator("#pause-missed-info")).to_contain_text("each occurrence it passed")
    stored = _row(world, "zz-pause-missed-all")
    assert stored.paused and stored.paused_missed == "all"


def test_a_missed_choice_without_until_is_refused_in_place(admin: Any, world: World) -> None:
    add_schedule(world, "zz-pause-missed-alone")
    dialog = _dialog(admin, "zz-pause-missed-alone")
    # The select's default is "not given": a plain pause stays a plain pause.
    expect(dialog.get_by_label(re.compile("When it resumes by itself"))).to_have_value("")
    dialog.get_by_label(re.compile("When it resumes by itself")).select_option("once")
    dialog.get_by_role("button", name="Pause").click()
    expect(admin.get_by_role("alert")).to_contain_text("X400102UNTINV")
    assert not _row(world, "zz-pause-missed-alone").paused
