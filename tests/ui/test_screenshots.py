"""Screenshots of the console for the README, taken from the seeded world.

They are written to a temporary directory on every run (so the pages are
exercised), and to docs/screenshots/ when CRONPLANE_SCREENSHOTS=1:

    CRONPLANE_SCREENSHOTS=1 .venv/bin/pytest tests/ui/test_screenshots.py
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ui_support import World, add_job, add_schedule, sign_in

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _target(tmp_path: Path) -> Path:
    if os.environ.get("CRONPLANE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        return DOCS
    return tmp_path


def test_screenshots(admin: Any, world: World, tmp_path: Path) -> None:
    out = _target(tmp_path)
    admin.set_viewport_size({"width": 1360, "height": 700})
    expect(admin.locator("#schedules tbody tr").first).to_be_visible()
    admin.screenshot(path=str(out / "listing.png"), full_page=True)

    admin.goto("/schedules/new")
    admin.get_by_label("Environment").fill("prod")
    admin.get_by_role("button", name="Choose job…").click()
    expect(admin.get_by_role("dialog", name="Select job")).to_be_visible()
    admin.screenshot(path=str(out / "job-picker.png"))
    admin.get_by_role("button", name="Select send-invoices (billing)").click()
    admin.get_by_label("Name").fill("invoices-weekly")

    admin.get_by_role("tab", name="Cron").click()
    admin.get_by_label("Repeat").select_option("weekly")
    admin.get_by_label("On", exact=True).select_option("1")
    admin.get_by_label("At (HH:MM)").fill("07:45")
    admin.get_by_label("Time zone").select_option("Europe/London")
    expect(admin.locator("#cron-description")).to_contain_text("07:45")
    expect(admin.locator("#cron-next li")).to_have_count(5)
    admin.evaluate("document.activeElement.blur()")
    admin.screenshot(path=str(out / "cron-tab.png"), full_page=True)

    admin.goto("/schedules/billing/prod/invoices-sweep?tab=json")
    admin.get_by_role("button", name="Run now").click()
    admin.get_by_role("dialog").get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    expect(admin.locator("#payload-ok")).to_be_visible()
    admin.screenshot(path=str(out / "json-tab-run.png"), full_page=True)
    admin.get_by_role("tab", name="History").click()
    expect(admin.locator("#items tbody tr[data-status='succeeded']").first).to_be_visible()
    admin.screenshot(path=str(out / "history-tab.png"), full_page=True)

    add_job(world, "stock", "shot-fails", "python:ui_handlers:broken", {"max_attempts": 1})
    add_schedule(world, "shot-fails", job="shot-fails", stack="stock")
    admin.goto("/schedules/stock/prod/shot-fails")
    admin.get_by_role("button", name="Run now").click()
    admin.get_by_role("dialog").get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-outcome")).to_have_text("failed", timeout=15_000)
    # The page leads with its status: the failure's cause and the timeline's red bar.
    admin.reload()
    expect(admin.locator("#status-outcome a.cause")).to_be_visible()
    admin.locator("#status-strip").screenshot(path=str(out / "schedule-status.png"))
    admin.locator("#status-outcome a.cause").click()
    expect(admin.locator("#run-status")).to_have_text("failed")
    admin.screenshot(path=str(out / "run-page.png"), full_page=True)
    admin.get_by_role("link", name="Jobs").click()
    expect(admin.locator("#problem-items tr[data-job='shot-fails']")).to_be_visible()
    admin.screenshot(path=str(out / "jobs.png"), full_page=True)
    shots = ("listing", "job-picker", "cron-tab", "json-tab-run", "history-tab", "jobs")
    for name in (*shots, "run-page"):
        assert (out / f"{name}.png").stat().st_size > 10_000
    assert (out / "schedule-status.png").stat().st_size > 2_000


def test_at_390_px_the_listing_keeps_name_status_and_next_run(
    browser: Any, world: World, tmp_path: Path
) -> None:
    out = _target(tmp_path)
    context = browser.new_context(
        base_url=world.url, viewport={"width": 390, "height": 844}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    phone = context.new_page()
    try:
        sign_in(phone, world)
        rows = phone.locator("#schedules tbody tr")
        expect(rows.first).to_be_visible()
        for name in ("invoices-sweep", "nightly-report", "monthly-notice"):
            row = phone.locator(f"#schedules tr[data-name='{name}']")
            for cell in ("td.col-name a", "td.col-status .badge", "td.col-next"):
                box = row.locator(cell).bounding_box()
                assert box is not None, (name, cell)
                assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (name, cell, box)
        expect(phone.locator("#schedules th", has_text="Created")).to_be_hidden()
        page_width = phone.evaluate("document.documentElement.scrollWidth")
        assert page_width <= 390, page_width  # no sideways scrolling
        phone.screenshot(path=str(out / "listing-narrow.png"), full_page=False)
        assert (out / "listing-narrow.png").stat().st_size > 10_000
    finally:
        context.close()
