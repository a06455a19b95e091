"""Every page of the console at 1280 and 390 px (issue 39): it loads, nothing makes the
page scroll sideways, and its main control is there (the run page has its own test of
both widths, tests/ui/test_run_page.py). Screenshots of each go to a
temporary directory (docs/screenshots/pages/ with CRONPLANE_SCREENSHOTS=1)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ui_support import World, sign_in

from cronplane.core.access import Role

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "pages"
SCHEDULE = "/schedules/billing/prod/invoices-sweep"
# Each page: its path, and a control that must be on screen (inside the viewport's width).
PAGES = {
    "listing": ("/", "#schedules"),
    "new": ("/schedules/new", "button[type=submit]"),
    "details": (SCHEDULE, "#status-strip"),
    "cron": (SCHEDULE + "?tab=cron", "#cron-description"),
    "json": (SCHEDULE + "?tab=json", "textarea"),
    "history": (SCHEDULE + "?tab=history", "#items"),
    "edit": (SCHEDULE + "/edit", "#save-button"),
    "versions": (SCHEDULE + "/versions", "h1"),
    "jobs": ("/jobs", "#jobs"),
    "job-versions": ("/jobs/stock/legacy-export/versions", "#versions"),
    "alerts": ("/alerts", "#alert-rules"),
    "calendars": ("/calendars", "#calendar-form"),
}


def _out(tmp_path: Path) -> Path:
    if os.environ.get("CRONPLANE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        return DOCS
    return tmp_path


@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_fits_its_width(browser: Any, world: World, tmp_path: Path, width: int) -> None:
    out = _out(tmp_path)
    context = browser.new_context(
        base_url=world.url, viewport={"width": width, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        page.goto("/login")
        expect(page.get_by_label("API token")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(out / f"login-{width}.png"), full_page=True)
        sign_in(page, world, Role.ADMIN)
        overflowing = {}
        for name, (path, control) in PAGES.items():
            response = page.goto(path)
            assert response is not None and response.status == 200, (name, path)
            expect(page.locator(control).first).to_be_attached()
            wide = page.evaluate("document.documentElement.scrollWidth")
            if wide > width:
                # Which elements stick out: what a person would have to scroll to.
                overflowing[name] = page.evaluate(
                    """(width) => [...document.querySelectorAll('body *')]
                        .filter(e => e.getBoundingClientRect().right > width + 1)
                        .slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '')
                        + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))""",
                    width,
                )
            page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
        assert overflowing == {}, overflowing
        # The dialogs with time inputs are forms that fit too: each field full width.
        page.goto(SCHEDULE)
        for opener, field in (("Pause", "#pause-until"), ("Backfill", "#backfill-from")):
            page.get_by_role("button", name=opener, exact=True).click()
            dialog = page.locator("dialog[open]")
            box, input_box = dialog.bounding_box(), page.locator(field).bounding_box()
            assert box is not None and input_box is not None
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (opener, box)
            assert input_box["width"] >= box["width"] * 0.7, (opener, input_box, box)
            page.screenshot(path=str(out / f"{opener.lower()}-dialog-{width}.png"))
            dialog.get_by_role("button", name="Cancel").click()
        for name in PAGES:
            assert (out / f"{name}-{width}.png").stat().st_size > 5_000
    finally:
        context.close()
