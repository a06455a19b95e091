"""A job's Versions page (issue 38): reached from the Jobs page, two definitions side
by side, a Roll back (editor role) that makes an old one current again, in Chromium."""

from __future__ import annotations

import os
from typing import Any

import pytest
from ui_support import TENANT, World, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

TARGET = "python:app.jobs:flush"


def _job(world: World, name: str) -> ScheduleService:
    service = ScheduleService(world.database, SystemClock())
    service.register_job(TENANT, "billing", JobSpec(name=name, target=TARGET), actor="ops")
    service.update_job(TENANT, "billing", name, JobPatch(title="Flush all"), actor="ops")
    return service


def test_an_operator_sees_a_jobs_change_and_rolls_it_back(admin: Any, world: World) -> None:
    service = _job(world, "zz-job-versioned")
    admin.goto("/jobs")
    admin.get_by_label("Versions of job zz-job-versioned").click()
    admin.wait_for_url("**/jobs/billing/zz-job-versioned/versions")
    title = admin.locator("#diff tr[data-field='title']")
    expect(title.locator("td.old")).to_have_text("")
    expect(title.locator("td.new")).to_have_text("Flush all")
    rows = admin.locator("#versions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("current")
    admin.once("dialog", lambda dialog: dialog.accept())
    admin.get_by_label("Reason for rolling back to version 1").fill("wrong title")
    admin.get_by_role("button", name="Roll back to version 1").click()
    expect(admin.get_by_role("status")).to_contain_text("Rolled back to version 1")
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("rollback")
    expect(rows.first).to_contain_text("wrong title")
    assert service.get_job(TENANT, "billing", "zz-job-versioned").title == ""


def test_a_stale_page_is_refused_and_a_viewer_has_no_roll_back(page: Any, world: World) -> None:
    service = _job(world, "zz-job-stale")
    sign_in(page, world, Role.ADMIN)
    page.goto("/jobs/billing/zz-job-stale/versions")
    service.update_job(TENANT, "billing", "zz-job-stale", JobPatch(title="Other"), actor="x")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Roll back to version 1").click()
    expect(page.locator("body")).to_contain_text("X412001REVSTL")
    assert service.get_job(TENANT, "billing", "zz-job-stale").title == "Other"
    sign_in(page, world, Role.VIEWER)
    page.goto("/jobs/billing/zz-job-stale/versions?first=1&second=3")
    expect(page.locator("#diff tr[data-field='title'] td.new")).to_have_text("Other")
    expect(page.get_by_role("button", name="Roll back to version 1")).to_have_count(0)
    missing = page.goto("/jobs/billing/zz-job-stale/versions?first=99")
    assert missing is not None and missing.status == 404
    expect(page.locator("body")).to_contain_text("X404384JVRNFD")
