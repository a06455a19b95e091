"""The schedule page leads with status (issue 39): state, next run or the pause, the last
outcome with its cause, and the run timeline, above the form, at 1280 and at 390 px."""

from __future__ import annotations

import os
from typing import Any

import pytest
from ui_support import World, add_job, add_schedule, sign_in

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def _run_now(page: Any) -> None:
    page.get_by_role("button", name="Run now").click()
    page.get_by_role("dialog").get_by_role("button", name="Run now").click()


def test_status_comes_first_with_the_timeline_and_the_cause(admin: Any, world: World) -> None:
    add_job(world, "billing", "zz-strip-fails", "python:ui_handlers:broken", {"max_attempts": 1})
    add_schedule(world, "zz-strip", job="zz-strip-fails")
    admin.goto("/schedules/billing/prod/zz-strip")
    strip = admin.locator("#status-strip")
    expect(strip.locator("#no-occurrence")).to_contain_text("No occurrence yet")
    expect(strip.get_by_role("img")).to_have_count(0)
    _run_now(admin)
    expect(admin.locator("#run-outcome")).to_have_text("failed", timeout=15_000)
    admin.reload()
    expect(strip).to_contain_text("ACTIVE")
    expect(admin.locator("#status-outcome")).to_contain_text("failed")
    expect(admin.locator("#status-outcome a.cause")).to_contain_text("upstream ledger")
    picture = strip.get_by_role("img")
    expect(picture).to_have_attribute(
        "aria-label", "The last 1 occurrences: 0 succeeded or fired, 1 failed, 0 skipped."
    )
    expect(picture.locator("title")).to_contain_text("run now by token:admin-browser, failed")
    # Above the form: the strip's top is above the tabs'.
    strip_box, tabs_box = strip.bounding_box(), admin.get_by_role("tablist").bounding_box()
    assert strip_box is not None and tabs_box is not None and strip_box["y"] < tabs_box["y"]


def test_a_paused_schedule_says_until_when_and_by_whom_at_390_px(
    browser: Any, world: World
) -> None:
    from cronplane.clock import SystemClock
    from cronplane.core.model import Scope
    from cronplane.service import ScheduleService

    add_schedule(world, "zz-strip-paused", cron="0 6 * * *")
    ScheduleService(world.database, SystemClock()).pause_schedule(
        Scope("demo", "billing", "prod"), "zz-strip-paused", actor="token:ops", note="freeze",
        until="2099-01-01T00:00Z",
    )  # fmt: skip
    context = browser.new_context(
        base_url=world.url, viewport={"width": 390, "height": 844}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    phone = context.new_page()
    try:
        sign_in(phone, world)
        phone.goto("/schedules/billing/prod/zz-strip-paused")
        nxt = phone.locator("#status-next")
        expect(nxt).to_contain_text("paused until 2099-01-01")
        expect(nxt).to_contain_text("by token:ops: freeze")
        for part in ("#status-strip .badge", "#status-next", "#no-occurrence"):
            box = phone.locator(part).first.bounding_box()
            assert box is not None, part
            # Visible without scrolling: within the first screen, and not past its edge.
            assert box["y"] + box["height"] <= 844 and box["x"] + box["width"] <= 390, (part, box)
        wide = phone.evaluate(
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect()"
            ".right > 391 && e.offsetParent !== null).slice(0, 5).map(e => e.tagName + '#' +"
            " e.id + '.' + e.className + ' ' + (e.textContent || '').slice(0, 60))"
        )
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (width, wide)
    finally:
        context.close()
