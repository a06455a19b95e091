"""The schedule console in a real browser: Debian's Chromium driven by Playwright.

One served world per session (tenant `demo`, see ui_support); each test
signs in on a fresh browser context and works on rows of its own.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from ui_support import World, add_schedule, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.ui.form import DETAIL_FIELDS

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_sign_in_shows_the_listing_with_times_in_zone_and_utc_on_hover(
    page: Any, world: World
) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=%2F"))
    page.get_by_label("API token").fill("cpt_not-a-real-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#page-error")).to_contain_text("X401001AUTHRQ")
    sign_in(page, world)
    table = page.locator("#schedules")
    for header in ("Job", "Name", "Source", "Status"):
        expect(table.get_by_role("columnheader", name=header, exact=True)).to_be_visible()
    for header in ("Last Run", "Next Run", "Created", "Updated"):  # each names its zone
        expect(
            table.get_by_role("columnheader", name=f"{header} (UTC)", exact=True)
        ).to_be_visible()
    row = table.locator("tr[data-name='nightly-report']")
    expect(row).to_contain_text("ACTIVE")
    # A Europe/London row's times read in UTC, the default; the hover title is UTC too.
    last_run = row.locator("td.last-run time")
    expect(last_run).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
    expect(last_run).to_have_attribute("title", re.compile(r" UTC$"))
    expect(table.locator("tr[data-name='monthly-notice']")).to_contain_text("INACTIVE")
    expect(table.locator("tr[data-name='pack-orders']")).to_contain_text("app")


def test_filters_and_search_narrow_the_listing(admin: Any) -> None:
    admin.get_by_label("Status").select_option("inactive")
    admin.get_by_role("button", name="Apply").click()
    rows = admin.locator("#schedules tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("monthly-notice")
    admin.get_by_role("link", name="Clear").click()
    admin.get_by_label("Search").fill("ledger")
    admin.get_by_label("Search").press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("ledger-sync")


def test_create_through_the_picker_and_a_preset(admin: Any, tmp_path: Path) -> None:
    admin.get_by_role("link", name="New schedule").click()
    create = admin.get_by_role("button", name="CREATE")
    expect(create).to_be_disabled()

    admin.get_by_role("button", name="Choose job…").click()
    picker = admin.get_by_role("dialog", name="Select job")
    expect(picker).to_be_visible()
    for header in ("Code", "Name", "Type", "Status"):
        expect(picker.get_by_role("columnheader", name=header, exact=True)).to_be_visible()
    expect(picker.get_by_role("button", name="Select legacy-export (stock)")).to_be_disabled()
    picker.get_by_label("Filter").fill("invoice")
    picker.get_by_role("button", name="Select send-invoices (billing)").click()
    expect(picker).to_be_hidden()
    expect(admin.get_by_label("Job (code)")).to_have_value("send-invoices")
    expect(admin.get_by_label("Stack")).to_have_value("billing")
    admin.get_by_label("Name").fill("invoices-browser")
    admin.get_by_label("Environment").fill("prod")
    expect(create).to_be_enabled()

    admin.get_by_role("tab", name="Cron").click()
    admin.get_by_label("Repeat").select_option("daily")
    admin.get_by_label("At (HH:MM)").fill("02:30")
    expect(admin.get_by_label("Expression")).to_have_value("30 2 * * *")
    admin.get_by_label("Time zone").select_option("Europe/Berlin")
    expect(admin.locator("#cron-normalized")).to_have_text("30 2 * * *")
    expect(admin.locator("#cron-description")).to_have_text("At 02:30, every day")
    expect(admin.locator("#cron-next li")).to_have_count(5)
    expect(admin.locator("#cron-next li").first).to_contain_text(re.compile(r"02:30 CES?T"))

    admin.get_by_role("tab", name="Json").click()
    payload = admin.get_by_label("Payload (JSON object)")
    assert json.loads(payload.input_value()) == {"batch": 100}  # the job's default
    expect(admin.locator("#payload-ok")).to_contain_text("matches the schema")
    payload.fill('{"batch": "many"}')
    expect(admin.locator("#payload-error")).to_contain_text("X400002PAYINV")
    upload = tmp_path / "payload.json"
    upload.write_text(json.dumps({"batch": 25, "dry_run": True}))
    admin.get_by_label("Load from a .json file").set_input_files(str(upload))
    expect(admin.locator("#payload-ok")).to_contain_text("matches the schema")
    assert json.loads(payload.input_value()) == {"batch": 25, "dry_run": True}

    create.click()
    expect(admin.get_by_role("status")).to_have_text("Schedule created.")
    expect(admin.get_by_role("heading", level=1)).to_have_text("invoices-browser")
    expect(admin.locator("#created-date time")).to_be_visible()
    expect(admin.locator("#modified-date time")).to_be_visible()
    admin.get_by_role("tab", name="Json").click()
    assert json.loads(admin.get_by_label("Payload (JSON object)").input_value()) == {
        "batch": 25,
        "dry_run": True,
    }


def test_a_bad_cron_shows_the_coded_error_live_and_on_save(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/ledger-sync/edit")
    admin.get_by_role("tab", name="Cron").click()
    expression = admin.get_by_label("Expression")
    expression.fill("61 * * * *")
    expect(admin.locator("#cron-error")).to_contain_text("X400001CRNINV")
    expect(admin.locator("#cron-error")).to_contain_text("61 * * * *")
    admin.get_by_role("button", name="Save").click()
    expect(admin.locator("#page-error")).to_contain_text("X400001CRNINV")
    # The error is shown in place: the Cron tab, the typed text kept and marked invalid.
    expect(admin.get_by_role("tab", name="Cron")).to_have_attribute("aria-selected", "true")
    expect(expression).to_have_value("61 * * * *")
    expect(expression).to_have_attribute("aria-invalid", "true")


def test_run_now_shows_the_queued_item_then_its_outcome(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/nightly-report")
    admin.get_by_role("tab", name="Json").click()
    admin.get_by_role("button", name="Run now").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Run .nightly-report. now"))
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Run now").click()
    expect(dialog).to_be_hidden()
    card = admin.locator("#run-card")
    expect(card).to_contain_text("Queue item")
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    expect(card).to_contain_text('"built": "daily"')
    admin.reload()
    admin.get_by_role("tab", name="History").click()
    expect(admin.locator("#items")).to_contain_text("succeeded")
    expect(admin.locator("#ledger")).to_contain_text("run now")


def test_run_now_with_an_edited_payload_runs_it_once_and_the_ledger_says_so(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/nightly-report")
    admin.get_by_role("button", name="Run now").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Run .nightly-report. now"))
    payload = dialog.get_by_label(re.compile("Payload for this run"))
    expect(payload).to_have_value(re.compile('"kind"'))
    payload.fill('{"kind": "adhoc"}')
    dialog.get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    expect(admin.locator("#run-card")).to_contain_text('"built": "adhoc"')
    admin.reload()
    admin.get_by_role("tab", name="History").click()
    expect(admin.locator("#ledger")).to_contain_text("payload overridden")
    # The saved payload is unchanged: the next run without edits uses it again.
    admin.get_by_role("tab", name="Json").click()
    expect(admin.locator("#payload")).not_to_have_value(re.compile("adhoc"))
    expect(admin.locator("#payload")).to_have_value(re.compile("kind"))


def test_run_now_refuses_a_payload_that_is_not_json_in_place(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/nightly-report")
    admin.get_by_role("button", name="Run now").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Run .nightly-report. now"))
    dialog.get_by_label(re.compile("Payload for this run")).fill("{not json")
    dialog.get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-status")).to_contain_text("X400002PAYINV")


def test_a_failing_run_shows_the_jobs_own_error(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/ledger-sync")
    admin.get_by_role("button", name="Run now").click()
    admin.get_by_role("dialog").get_by_role("button", name="Run now").click()
    expect(admin.locator("#run-card")).to_contain_text("upstream ledger is locked", timeout=30_000)


def test_disable_then_enable(admin: Any) -> None:
    admin.goto("/schedules/stock/prod/replenish-weekdays")
    expect(admin.locator("#status-badge")).to_have_text("ACTIVE")
    admin.get_by_role("button", name="Disable").click()
    expect(admin.get_by_role("status")).to_have_text("Disabled.")
    expect(admin.locator("#status-badge")).to_have_text("INACTIVE")
    admin.get_by_role("button", name="Enable").click()
    expect(admin.get_by_role("status")).to_have_text("Enabled.")
    expect(admin.locator("#status-badge")).to_have_text("ACTIVE")


def test_delete_asks_first(admin: Any, world: World) -> None:
    admin.goto("/schedules/new")
    admin.get_by_role("button", name="Choose job…").click()
    admin.get_by_role("button", name="Select notify-buyers (stock)").click()
    admin.get_by_label("Name").fill("doomed")
    admin.get_by_role("button", name="CREATE").click()
    expect(admin.get_by_role("status")).to_have_text("Schedule created.")

    admin.get_by_role("button", name="Delete").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Delete .doomed."))
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(admin.get_by_role("heading", level=1)).to_have_text("doomed")
    admin.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(admin).to_have_url(re.compile(r"/\?notice="))
    expect(admin.get_by_role("status")).to_have_text("Schedule doomed deleted.")
    expect(admin.locator("#schedules tr[data-name='doomed']")).to_have_count(0)


def test_app_rows_show_overrides_and_reset_to_manifest(admin: Any) -> None:
    admin.goto("/schedules/shop/prod/pack-orders")
    expect(admin.get_by_label("Job (code)")).to_have_attribute("readonly", "")
    expect(admin.get_by_role("button", name="Choose job…")).to_have_count(0)
    expect(admin.get_by_role("button", name="Delete")).to_have_count(0)
    admin.get_by_role("link", name="Edit", exact=True).click()
    admin.get_by_role("tab", name="Cron").click()
    admin.get_by_label("Expression").fill("*/20 * * * *")
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_have_text("Saved.")
    expect(admin.locator("#overrides")).to_contain_text("cron")
    # Reset asks first, naming what it drops; Cancel keeps the override.
    admin.get_by_role("button", name="Reset to manifest").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Reset .pack-orders. to its manifest"))
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("cron")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    expect(admin.get_by_role("status")).to_have_text("Saved.")
    expect(admin.locator("#overrides")).to_contain_text("cron")
    admin.get_by_role("button", name="Reset to manifest").click()
    dialog.get_by_role("button", name="Reset to manifest").click()
    expect(admin.get_by_role("status")).to_have_text("Reset to the manifest.")
    expect(admin.locator("#overrides")).to_contain_text("as the manifest declares")
    admin.get_by_role("tab", name="Cron").click()
    expect(admin.get_by_label("Expression")).to_have_value("*/30 * * * *")


def test_a_viewer_sees_no_edit_buttons_and_the_server_refuses_anyway(
    page: Any, world: World
) -> None:
    sign_in(page, world, Role.VIEWER)
    expect(page.get_by_role("link", name="New schedule")).to_have_count(0)
    page.goto("/schedules/billing/prod/invoices-sweep")
    for name in ("Run now", "Disable", "Delete", "Save", "Choose job…", "Reset to manifest"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_label("Expression")).to_have_attribute("readonly", "")
    expect(page.get_by_text("Read-only: your role (viewer)")).to_be_visible()
    expect(page.get_by_role("link", name="Edit", exact=True)).to_have_count(0)
    page.goto("/schedules/billing/prod/invoices-sweep/edit")
    expect(page.locator("#page-error")).to_contain_text("X403001FORBID")
    page.goto("/schedules/billing/prod/invoices-sweep")
    csrf = page.locator("input[name=csrf]").first.input_value()
    forged = page.request.post(
        "/schedules/billing/prod/invoices-sweep/disable", form={"csrf": csrf}, max_redirects=0
    )
    assert forged.status == 403
    assert "X403001FORBID" in forged.text()
    page.goto("/schedules/new")
    expect(page.locator("#page-error")).to_contain_text("X403001FORBID")


def test_an_operator_may_run_and_toggle_but_not_edit(page: Any, world: World) -> None:
    sign_in(page, world, Role.OPERATOR)
    page.goto("/schedules/billing/prod/invoices-sweep")
    expect(page.get_by_role("button", name="Run now")).to_be_visible()
    expect(page.get_by_role("button", name="Disable")).to_be_visible()
    for name in ("Save", "Delete"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_role("link", name="Edit", exact=True)).to_have_count(0)


def test_a_rows_page_leads_with_status_and_edit_is_its_own_view(admin: Any) -> None:
    admin.goto("/schedules/billing/prod/invoices-sweep")
    expect(admin.locator("#status-strip")).to_be_visible()
    expect(admin.get_by_role("button", name="Save")).to_have_count(0)  # no form to save here
    expect(admin.get_by_label("Expression")).to_have_attribute("readonly", "")
    admin.get_by_role("link", name="Edit", exact=True).click()
    expect(admin).to_have_url(re.compile(r"/schedules/billing/prod/invoices-sweep/edit$"))
    expect(admin.get_by_role("heading", level=1)).to_have_text("Edit invoices-sweep")
    expect(admin.locator("#status-strip")).to_have_count(0)
    expect(admin.get_by_role("tab", name="History")).to_have_count(0)
    expect(admin.get_by_label("Expression")).to_be_editable()
    admin.get_by_role("link", name="Cancel").click()
    expect(admin).to_have_url(re.compile(r"/schedules/billing/prod/invoices-sweep$"))


def test_keyboard_moves_between_tabs_and_opens_the_picker(admin: Any) -> None:
    admin.goto("/schedules/new")
    details = admin.get_by_role("tab", name="Details")
    details.focus()
    admin.keyboard.press("ArrowRight")
    expect(admin.get_by_role("tab", name="Cron")).to_be_focused()
    expect(admin.get_by_role("tabpanel", name="Cron")).to_be_visible()
    admin.keyboard.press("End")
    expect(admin.get_by_role("tab", name="Json")).to_have_attribute("aria-selected", "true")
    admin.keyboard.press("Home")
    admin.get_by_role("button", name="Choose job…").focus()
    admin.keyboard.press("Enter")
    expect(admin.get_by_role("dialog", name="Select job")).to_be_visible()
    admin.keyboard.press("Escape")
    expect(admin.get_by_role("dialog", name="Select job")).to_be_hidden()


UNLABELLED = """() => Array.from(document.querySelectorAll('input, select, textarea'))
    .filter((el) => el.type !== 'hidden' && el.labels.length === 0 && !el.getAttribute('aria-label'))
    .map((el) => el.id || el.name || el.outerHTML)"""


def test_every_control_has_a_label(admin: Any) -> None:
    for path in ("/", "/schedules/new", "/schedules/billing/prod/invoices-sweep"):
        admin.goto(path)
        assert admin.evaluate(UNLABELLED) == [], path


# A value each kind of Details row accepts on a schedule firing every day at 03:00 UTC.
_TYPED = {
    "seconds": "30",
    "count": "7",
    "instant": "2031-06-01T03:00",
    "labels": "team=payments, tier=batch",
    "names": "zz-sundays",  # a calendar the test saves first
}


def test_every_details_row_of_the_field_table_is_an_input_that_saves(
    admin: Any, world: World
) -> None:
    """The Details tab is laid out from core.fields: a row added there is offered, labelled,
    and what is typed in it reaches the stored row."""
    add_schedule(world, "zz-every-detail")
    service = ScheduleService(world.database, SystemClock())
    service.save_calendar("demo", "zz-sundays", weekly=["sun"], actor="test")
    admin.goto("/schedules/billing/prod/zz-every-detail/edit")
    typed: dict[str, str] = {}
    for row in DETAIL_FIELDS:
        control = admin.get_by_label(re.compile(rf"^{re.escape(row.label)}\b"))
        expect(control).to_be_editable()
        if row.kind == "choice":
            typed[row.name] = row.choices[-1]
            control.select_option(typed[row.name])
        else:
            expect(control).to_have_attribute("placeholder", row.placeholder)
            typed[row.name] = _TYPED[row.kind]
            control.fill(typed[row.name])
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_have_text("Saved.")
    stored = ScheduleService(world.database, SystemClock()).get_schedule(
        Scope("demo", "billing", "prod"), "zz-every-detail"
    )
    for name, text in typed.items():
        value = getattr(stored, name)
        if isinstance(value, datetime):
            shown = value.strftime("%Y-%m-%dT%H:%M")
        elif isinstance(value, dict):
            shown = ", ".join(f"{key}={item}" for key, item in sorted(value.items()))
        elif isinstance(value, list):
            shown = ", ".join(value)
        else:
            shown = str(value)
        assert shown == text, name


def test_the_cron_tab_notes_the_clock_changes_under_the_policy_chosen(
    admin: Any, world: World
) -> None:
    add_schedule(world, "zz-dst-notes", cron="30 1 * * *", timezone="Europe/London")
    admin.goto("/schedules/billing/prod/zz-dst-notes/edit")
    admin.get_by_label("Clocks back").select_option("second")
    admin.get_by_role("tab", name="Cron").click()
    notes = admin.locator("#cron-dst-notes")
    expect(notes).to_contain_text("happens twice")
    expect(notes).to_contain_text("runs on the second pass (dst repeat: second)")
    expect(notes).to_contain_text("does not exist")
