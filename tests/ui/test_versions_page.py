"""The Versions page (issue 38): every definition a schedule had, two side by side, and a
Roll back that makes an old one current again (editor role), in Chromium."""

from __future__ import annotations

import os
from typing import Any

import pytest
from ui_support import TENANT, World, add_schedule, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.inputs import SchedulePatch
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

SCOPE = Scope(TENANT, "billing", "prod")


def test_an_operator_sees_what_changed_and_rolls_it_back(admin: Any, world: World) -> None:
    add_schedule(world, "zz-versioned", cron="0 3 * * *")
    service = ScheduleService(world.database, SystemClock())
    service.update_schedule(SCOPE, "zz-versioned", SchedulePatch(cron="0 4 * * *"), actor="ops")
    admin.goto("/schedules/billing/prod/zz-versioned")
    admin.locator("#versions-link").click()
    admin.wait_for_url("**/zz-versioned/versions")
    # The default: the previous version against the current, field by field.
    cron = admin.locator("#diff tr[data-field='cron']")
    expect(cron.locator("td.old")).to_have_text("0 3 * * *")
    expect(cron.locator("td.new")).to_have_text("0 4 * * *")
    expect(admin.locator("#diff")).to_contain_text("At 03:00")
    expect(admin.locator("#diff")).to_contain_text("At 04:00")
    rows = admin.locator("#versions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("current")
    expect(rows.first).to_contain_text("ops")
    # Roll back (confirmed) to version 1: a third version, equal to the first.
    admin.once("dialog", lambda dialog: dialog.accept())
    admin.get_by_label("Reason for rolling back to version 1").fill("04:00 clashes with the backup")
    admin.get_by_role("button", name="Roll back to version 1").click()
    expect(admin.get_by_role("status")).to_contain_text("Rolled back to version 1")
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("rollback")
    expect(rows.first).to_contain_text("04:00 clashes with the backup")  # the reason kept
    assert service.get_schedule(SCOPE, "zz-versioned").cron == "0 3 * * *"
    # A confirm answered no changes nothing.
    admin.once("dialog", lambda dialog: dialog.dismiss())
    admin.get_by_role("button", name="Roll back to version 2").click()
    expect(rows).to_have_count(3)
    assert service.get_schedule(SCOPE, "zz-versioned").cron == "0 3 * * *"


def test_a_stale_page_is_refused_and_a_viewer_has_no_roll_back(page: Any, world: World) -> None:
    add_schedule(world, "zz-versioned-stale", cron="0 5 * * *")
    service = ScheduleService(world.database, SystemClock())
    service.update_schedule(
        SCOPE, "zz-versioned-stale", SchedulePatch(cron="0 6 * * *"), actor="ops"
    )
    sign_in(page, world, Role.ADMIN)
    page.goto("/schedules/billing/prod/zz-versioned-stale/versions")
    # Someone else edits after the page was read: its revision is stale.
    service.update_schedule(
        SCOPE, "zz-versioned-stale", SchedulePatch(cron="0 7 * * *"), actor="other"
    )
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Roll back to version 1").click()
    expect(page.locator("body")).to_contain_text("X412001REVSTL")
    assert service.get_schedule(SCOPE, "zz-versioned-stale").cron == "0 7 * * *"
    sign_in(page, world, Role.VIEWER)
    page.goto("/schedules/billing/prod/zz-versioned-stale/versions?first=1&second=3")
    expect(page.locator("#diff tr[data-field='cron'] td.new")).to_have_text("0 7 * * *")
    expect(page.get_by_role("button", name="Roll back to version 1")).to_have_count(0)
    missing = page.goto("/schedules/billing/prod/zz-versioned-stale/versions?first=99")
    assert missing is not None and missing.status == 404
    expect(page.locator("body")).to_contain_text("X404380VERNFD")
