"""The run page of a queue item (issue 39): attempts, output, cause and events, reached
from the History tab and the Jobs page, readable at 1280 and 390 px."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from ui_support import World, add_job, add_schedule, sign_in

from cronplane.core.access import Role

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def output_width(page: Any, width: int) -> float:
    """The log's <pre> width at a viewport `width` px wide (the page not scrolling sideways)."""
    page.set_viewport_size({"width": width, "height": 900})
    log = page.locator("#attempt-1 pre[data-field='log']")
    expect(log).to_be_visible()
    box = log.bounding_box()
    assert box is not None
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page scrolls sideways at {width} px ({scroll})"
    return float(box["width"])


def test_a_failed_runs_page_shows_its_output_and_cause(page: Any, world: World) -> None:
    add_job(world, "zz-run", "zz-noisy", "python:ui_handlers:noisy", {"max_attempts": 3})
    add_schedule(world, "zz-noisy-run", job="zz-noisy", stack="zz-run")
    sign_in(page, world, Role.OPERATOR)
    page.goto("/schedules/zz-run/prod/zz-noisy-run")
    page.get_by_role("button", name="Run now").click()
    page.get_by_role("dialog").get_by_role("button", name="Run now").click()
    expect(page.locator("#run-card")).to_contain_text("zz cause", timeout=15_000)

    # History: the failure's cause links to the run page.
    page.goto("/schedules/zz-run/prod/zz-noisy-run?tab=history")
    expect(page.locator("#items [data-attempts]").first).to_have_text(
        "attempt 1 of 3 (not retried)"
    )
    page.locator("#items a[data-cause]").first.click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}#cause$"))
    item_id = page.url.rsplit("/", 1)[1].split("#")[0]
    expect(page.locator("#run-status")).to_have_text("failed")
    expect(page.locator("#run-attempts")).to_have_text("attempt 1 of 3 (not retried)")
    expect(page.locator("#run-error")).to_contain_text("zz cause: the upstream ledger is closed")
    attempt = page.locator("#attempt-1")
    expect(attempt).to_have_attribute("data-outcome", "failed")
    log = attempt.locator("pre[data-field='log']")
    # The line the target logged, its own item's, the credential masked.
    expect(log).to_contain_text(f"zz-noisy {item_id} fetched https://feeds.example.com/export")
    expect(log).to_contain_text("token=***")
    expect(log).not_to_contain_text("zz-secret-42")
    expect(page.locator("#run-events")).to_contain_text("X200031ITMFAI")

    # Wide and narrow: the output keeps the column's width, wrapping whole words.
    assert output_width(page, 1280) > 900
    narrow = output_width(page, 390)
    assert narrow > 300, f"the output is {narrow} px wide at 390 px"
    line_height = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector("
        "\"#attempt-1 pre[data-field='log']\")).lineHeight) || 16"
    )
    box = log.bounding_box()
    assert box is not None
    # One record of ~230 characters: a handful of lines at 390 px, not a word a line (~40).
    assert box["height"] < 14 * line_height, box

    # The Jobs page says how the item failed, and links the same page.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/jobs")
    row = page.locator(f"#problem-items tr#item-{item_id}")
    expect(row.locator("[data-attempts]")).to_have_text("attempt 1 of 3 (not retried)")
    expect(row).to_contain_text("zz cause: the upstream ledger is closed")
    row.get_by_role("link", name=re.compile("^Run ")).click()
    page.wait_for_url(re.compile(f"/runs/{item_id}$"))
    expect(page.locator("#run-status")).to_have_text("failed")


def test_an_unknown_run_is_the_coded_not_found_page(page: Any, world: World) -> None:
    sign_in(page, world, Role.VIEWER)
    answer = page.goto("/runs/00000000-0000-4000-8000-000000000000")
    assert answer is not None and answer.status == 404
    expect(page.locator("main")).to_contain_text("X404904ITMNFD")
