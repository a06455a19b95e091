"""The listing's rows: never fired, last outcome, Run and Enable/Disable per row and in bulk."""

from __future__ import annotations

import os
import re
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


def _row(page: Any, name: str) -> Any:
    return page.locator(f"#schedules tr[data-name='{name}']")


def test_a_new_row_says_it_never_fired_then_run_now_links_its_outcome(
    admin: Any, world: World
) -> None:
    add_schedule(world, "fresh-row")
    admin.goto("/?q=fresh-row")
    row = _row(admin, "fresh-row")
    # last_run is set on creation (SPEC), but the listing shows no time for a row that
    # never fired (issue 39: the creation time read as a run): a dash and the badge.
    expect(row.locator("td.last-run time")).to_have_count(0)
    expect(row.locator("td.last-run")).to_contain_text("— never fired")
    expect(row.locator("td.last-outcome")).to_have_text("no run yet")

    row.get_by_role("button", name="Run fresh-row now").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Run .fresh-row. now"))
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(admin.locator("#run-card")).to_have_count(0)
    row.get_by_role("button", name="Run fresh-row now").click()
    dialog.get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-card")).to_contain_text("fresh-row")
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)

    admin.reload()
    outcome = row.locator("td.last-outcome").get_by_role("link", name="succeeded")
    expect(outcome).to_be_visible()
    # A run by hand is not a fire: the row still never fired.
    expect(row.locator("td.last-run")).to_contain_text("never fired")
    outcome.click()
    expect(admin).to_have_url(re.compile(r"/schedules/billing/prod/fresh-row\?tab=history#item-"))
    item_id = admin.url.rsplit("#item-", 1)[1]
    expect(admin.locator(f"#item-{item_id}")).to_contain_text("succeeded")
    expect(admin.locator("#last-outcome")).to_contain_text("succeeded")
    expect(admin.locator("#last-run")).to_contain_text("never fired")


def test_row_enable_and_disable(admin: Any, world: World) -> None:
    add_schedule(world, "row-toggle")
    admin.goto("/?q=row-toggle")
    row = _row(admin, "row-toggle")
    row.get_by_role("button", name="Disable row-toggle").click()
    expect(admin.get_by_role("status")).to_have_text("Disabled 1 schedule.")
    expect(admin).to_have_url(re.compile(r"q=row-toggle"))  # the filters are kept
    expect(row).to_contain_text("INACTIVE")
    row.get_by_role("button", name="Enable row-toggle").click()
    expect(admin.get_by_role("status")).to_have_text("Enabled 1 schedule.")
    expect(row).to_contain_text("ACTIVE")


def test_bulk_disable_asks_first_then_toggles_the_checked_rows(admin: Any, world: World) -> None:
    for name in ("bulk-a", "bulk-b", "bulk-c"):
        add_schedule(world, name)
    admin.goto("/?q=bulk-")
    disable = admin.get_by_role("button", name="Disable selected")
    expect(disable).to_be_disabled()
    _row(admin, "bulk-a").get_by_role("checkbox").check()
    _row(admin, "bulk-b").get_by_role("checkbox").check()
    expect(admin.locator("#bulk-count")).to_have_text("2 selected")
    disable.click()
    dialog = admin.get_by_role("dialog", name="Disable 2 schedule(s)?")
    expect(dialog).to_contain_text("bulk-a, bulk-b")
    dialog.get_by_role("button", name="Cancel").click()
    expect(_row(admin, "bulk-a")).to_contain_text("ACTIVE")
    disable.click()
    dialog.get_by_role("button", name="Disable 2").click()
    expect(admin.get_by_role("status")).to_have_text("Disabled 2 schedules.")
    expect(_row(admin, "bulk-a")).to_contain_text("INACTIVE")
    expect(_row(admin, "bulk-b")).to_contain_text("INACTIVE")
    expect(_row(admin, "bulk-c").locator("td.col-status")).to_have_text("ACTIVE")

    admin.get_by_label("Select all schedules on this page").check()
    admin.get_by_role("button", name="Enable selected").click()
    admin.get_by_role("dialog").get_by_role("button", name="Enable 3").click()
    expect(admin.get_by_role("status")).to_have_text("Enabled 3 schedules.")
    expect(admin.locator("#schedules tbody")).not_to_contain_text("INACTIVE")


def test_a_stale_row_is_refused_not_toggled(admin: Any, world: World) -> None:
    add_schedule(world, "stale-row")
    admin.goto("/?q=stale-row")
    other = admin.context.new_page()
    other.goto("/schedules/billing/prod/stale-row")
    other.get_by_role("button", name="Disable").click()
    expect(other.get_by_role("status")).to_have_text("Disabled.")
    other.close()
    _row(admin, "stale-row").get_by_role("button", name="Disable stale-row").click()
    expect(admin.get_by_role("status")).to_have_text("Disabled 0 schedules.")
    expect(admin.locator("#bulk-refused")).to_contain_text("stale-row: X412001REVSTL")


def test_an_operator_gets_row_actions_too(page: Any, world: World) -> None:
    sign_in(page, world, Role.OPERATOR)
    row = _row(page, "invoices-sweep")
    expect(row.get_by_role("button", name="Run invoices-sweep now")).to_be_visible()
    expect(row.get_by_role("checkbox")).to_be_visible()


def test_a_row_pauses_and_resumes_from_the_listing_and_says_paused_not_a_next_run(
    admin: Any, world: World
) -> None:
    """Issue 39: the listing has Pause/Resume, and a paused row advertises no next run."""
    add_schedule(world, "zz-listing-pause", cron="0 4 * * *")
    admin.goto("/?q=zz-listing-pause")
    row = _row(admin, "zz-listing-pause")
    expect(row.locator("td.col-next time")).to_be_visible()
    row.get_by_role("button", name="Pause zz-listing-pause").click()
    admin.wait_for_url(re.compile(r"/\?.*notice="))
    expect(admin.get_by_role("status").first).to_contain_text("zz-listing-pause: Paused.")
    row = _row(admin, "zz-listing-pause")
    expect(row.locator("td.col-status")).to_contain_text("PAUSED")
    expect(row.locator("td.col-next")).to_have_text("paused")
    row.get_by_role("button", name="Resume zz-listing-pause").click()
    admin.wait_for_url(re.compile(r"/\?.*notice="))
    row = _row(admin, "zz-listing-pause")
    expect(row.locator("td.col-status")).to_contain_text("ACTIVE")
    expect(row.locator("td.col-next time")).to_be_visible()
