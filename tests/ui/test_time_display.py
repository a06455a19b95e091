"""The console's one time rule: every time on a page in one zone, UTC unless the viewer
chose the browser's zone or each schedule's own, named in the column headers; the choice
remembered per user."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from ui_support import World, add_schedule, sign_in

from cronplane.core.access import Role

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

IN_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")


@pytest.fixture
def new_york(browser: Any, world: World) -> Iterator[Any]:
    """A page in a browser whose own zone is America/New_York."""
    context = browser.new_context(
        base_url=world.url, locale="en-GB", timezone_id="America/New_York"
    )
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


def test_utc_by_default_each_rows_zone_on_request_and_remembered(admin: Any, world: World) -> None:
    add_schedule(world, "kl-times", timezone="Asia/Kuala_Lumpur")
    admin.goto("/?q=kl-times")
    next_run = admin.locator("#schedules tr[data-name='kl-times'] td.col-next time")
    header = admin.get_by_role("columnheader", name=re.compile("^Next Run"))
    expect(next_run).to_have_text(IN_UTC)
    expect(header).to_have_text("Next Run (UTC)")
    admin.get_by_label("Times in").select_option("schedule")
    expect(next_run).to_have_text(re.compile(r"\+08$"))
    expect(header).to_have_text("Next Run (each row's zone)")
    admin.reload()
    expect(admin.get_by_label("Times in")).to_have_value("schedule")
    expect(next_run).to_have_text(re.compile(r"\+08$"))

    admin.get_by_label("Times in").select_option("utc")
    admin.goto("/schedules/billing/prod/kl-times")
    expect(admin.locator("#created-date time")).to_have_text(IN_UTC)
    admin.get_by_role("tab", name="Cron").click()
    # A cron's next runs are about its zone's clock: in that zone, named in the header.
    expect(admin.locator("#cron-next li time").first).to_have_text(re.compile(r"03:00 \+08$"))
    expect(admin.locator(".explain dt", has_text="Next 5 runs")).to_contain_text(
        "Asia/Kuala_Lumpur"
    )
    admin.get_by_role("button", name="Run now").click()
    admin.get_by_role("dialog").get_by_role("button", name="Run now").click()
    queued = admin.locator("#run-card .run-head time")
    expect(queued).to_have_text(IN_UTC)
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    expect(queued).to_have_text(IN_UTC)  # the polled card too

    admin.get_by_label("Times in").select_option("schedule")
    expect(admin.locator("#created-date time")).to_have_text(re.compile(r"\+08$"))


def test_the_choice_belongs_to_the_user(admin: Any, world: World) -> None:
    admin.get_by_label("Times in").select_option("schedule")
    sign_in(admin, world, Role.VIEWER)  # same browser, another user
    expect(admin.get_by_label("Times in")).to_have_value("utc")


def test_the_browsers_zone(new_york: Any, world: World) -> None:
    sign_in(new_york, world)
    choice = new_york.get_by_label("Times in")
    expect(choice.locator("option[value=browser]")).to_have_text(re.compile("America/New_York"))
    choice.select_option("browser")
    # Searched for: other tests add rows to the shared world, past the first page.
    new_york.goto("/?q=nightly-report")
    last_run = new_york.locator("#schedules tr[data-name='nightly-report'] td.last-run time")
    expect(last_run).to_have_text(re.compile(r"\d\d:\d\d (GMT-[45]|E[SD]T)$"))
    header = new_york.get_by_role("columnheader", name=re.compile("^Last Run"))
    expect(header).to_have_text("Last Run (America/New_York)")


def test_the_zone_picker_is_searchable(admin: Any) -> None:
    admin.goto("/schedules/new")
    admin.get_by_role("tab", name="Cron").click()
    admin.get_by_label("Search zones").fill("kuala")
    expect(admin.get_by_label("Time zone", exact=True)).to_have_value("Asia/Kuala_Lumpur")
    admin.get_by_label("Expression").fill("0 6 * * *")
    expect(admin.locator("#cron-next li").first).to_contain_text("06:00 +08")
