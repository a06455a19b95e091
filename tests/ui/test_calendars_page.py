"""The console's Calendars page in Chromium (issue 36): an editor saves a calendar (and
sees a bad holidays code refused with the form kept), a schedule that excludes it is
listed beside it with no Remove, its Details show the calendar, and a viewer only reads."""

from __future__ import annotations

import os
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


def test_an_editor_saves_a_calendar_and_a_schedule_excludes_it(page: Any, world: World) -> None:
    sign_in(page, world, Role.EDITOR)
    page.get_by_role("link", name="Calendars", exact=True).click()
    form = page.locator("#calendar-form")
    form.get_by_label("Name").fill("zz-closed")
    form.get_by_label("sat").check()
    form.get_by_label("sun").check()
    form.get_by_label("Public holidays").fill("Atlantis")
    form.get_by_role("button", name="Save calendar").click()
    expect(page.locator(".error, [role=alert]").first).to_contain_text("Atlantis")
    expect(form.get_by_label("Name")).to_have_value("zz-closed")  # the form is kept
    expect(form.get_by_label("sat")).to_be_checked()
    form.get_by_label("Public holidays").fill("GB-ENG")
    form.get_by_role("button", name="Save calendar").click()
    expect(page.get_by_role("status")).to_contain_text("Saved calendar zz-closed (revision 1)")
    row = page.locator("#calendars tr[data-name='zz-closed']")
    expect(row).to_contain_text("sat, sun")
    expect(row).to_contain_text("GB-ENG")

    service = ScheduleService(world.database, SystemClock())
    spec = ScheduleSpec(
        job="build-report", cron="0 9 * * *", name="zz-weekdays",
        exclude=["zz-closed"], on_excluded="next",
    )  # fmt: skip
    service.create_schedule(Scope(TENANT, "billing", "prod"), spec, actor="test")
    page.reload()
    expect(row.locator(".excluded-by")).to_contain_text("zz-weekdays")
    expect(row.get_by_role("button", name="Remove zz-closed")).to_have_count(0)
    row.locator(".excluded-by a").click()
    page.get_by_role("tab", name="Details").click()
    expect(page.get_by_label("Excluded calendars")).to_have_value("zz-closed")
    expect(page.get_by_label("On an excluded day")).to_have_value("next")


def test_a_viewer_reads_calendars_but_cannot_change_them(page: Any, world: World) -> None:
    service = ScheduleService(world.database, SystemClock())
    service.save_calendar(TENANT, "zz-holidays", holidays="US", actor="test")
    sign_in(page, world, Role.VIEWER)
    page.goto("/calendars")
    expect(page.locator("#calendars tr[data-name='zz-holidays']")).to_contain_text("US")
    expect(page.locator("#calendar-form")).to_have_count(0)
    expect(page.get_by_role("button", name="Remove zz-holidays")).to_have_count(0)
