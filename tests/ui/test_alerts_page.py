"""The console's alerts: a badge on the listing, the rules on a schedule's page, the
Alerts page with Acknowledge for operators (not for viewers). The alert is raised
by the served node's own alert loop from a real failed run."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from ui_support import TENANT, World, add_job, add_schedule, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.alerts import RuleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_an_alert_is_shown_on_the_listing_the_schedule_and_the_alerts_page(
    page: Any, world: World
) -> None:
    add_job(world, "stock", "alarming", "python:ui_handlers:broken", {"max_attempts": 1})
    add_schedule(world, "alarmed", job="alarming", stack="stock")
    service = ScheduleService(world.database, SystemClock())
    mail = {"host": "127.0.0.1", "port": 9, "sender": "cron@example.com", "to": ["o@example.com"]}
    service.add_alert_channel(TENANT, "ui-mail", "email", mail, secret=None, actor="test")
    rule = RuleSpec("alarmed-fails", "failed", "schedule", "stock", "prod", "alarmed",
                    channels=("ui-mail",))  # fmt: skip
    service.add_alert_rule(TENANT, rule, actor="test")
    service.run_now(Scope(TENANT, "stock", "prod"), "alarmed", actor="test")

    sign_in(page, world, Role.VIEWER)
    badge = page.locator("tr[data-name='alarmed'] .alert-badge")
    for _ in range(40):  # the loop evaluates every 5 s, events settle 2 s
        if badge.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(badge).to_have_text("⚠ 1")
    page.locator("tr[data-name='alarmed'] .col-name a").first.click()
    expect(page.locator("#alert-rules")).to_contain_text("alarmed-fails")
    expect(page.locator("#alert-rules")).to_contain_text("1 open")

    page.get_by_role("link", name="Alerts", exact=True).click()
    row = page.locator("#open-alerts tr[data-rule='alarmed-fails']")
    expect(row).to_contain_text("failed")
    expect(row).to_contain_text("alarmed")
    expect(row.get_by_role("button")).to_have_count(0)  # a viewer may not acknowledge
    expect(page.locator("#alert-rules tr[data-rule='alarmed-fails']")).to_contain_text(
        "schedule stock / prod / alarmed"
    )

    page.context.clear_cookies()
    sign_in(page, world, Role.OPERATOR)
    # On a phone the row reads as a card: Acknowledge on screen, nothing to scroll to.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/alerts")
    button = page.locator("#open-alerts tr[data-rule='alarmed-fails']").get_by_role("button")
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    wrap = page.locator("#open-alerts").locator("xpath=..")
    assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth")
    page.set_viewport_size({"width": 1360, "height": 860})
    page.goto("/alerts")
    row = page.locator("#open-alerts tr[data-rule='alarmed-fails']")
    row.get_by_role("button", name=re.compile("^Acknowledge")).click()
    expect(page.get_by_role("status")).to_contain_text("Acknowledged: failed on alarmed")
    expect(row.locator(".acked")).to_contain_text("operator-browser")
    expect(row.get_by_role("button")).to_have_count(0)
