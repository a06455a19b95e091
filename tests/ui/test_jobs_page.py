"""The Jobs page: the tenant's jobs, and failed/expired/retrying items with Retry and Cancel."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from ui_support import TENANT, World, add_job, add_schedule, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def _run_and_wait(page: Any, path: str, text: str | re.Pattern[str]) -> None:
    page.goto(path)
    page.get_by_role("button", name="Run now").click()
    page.get_by_role("dialog").get_by_role("button", name="Run now").click()
    expect(page.locator("#run-card")).to_contain_text(text, timeout=15_000)


def test_jobs_page_lists_jobs_and_lets_an_operator_retry_and_cancel(
    page: Any, world: World
) -> None:
    add_job(world, "stock", "once-only", "python:ui_handlers:broken", {"max_attempts": 1})
    add_job(world, "stock", "slow-retry", "python:ui_handlers:broken", {"retry_base": 3600})
    add_schedule(world, "once-only", job="once-only", stack="stock")
    add_schedule(world, "slow-retry", job="slow-retry", stack="stock")
    sign_in(page, world, Role.OPERATOR)
    _run_and_wait(page, "/schedules/stock/prod/once-only", "upstream ledger is locked")
    expect(page.locator("#run-outcome")).to_have_text("failed")
    _run_and_wait(page, "/schedules/stock/prod/slow-retry", "attempt 1/3 failed")

    page.get_by_role("link", name="Jobs").click()
    jobs = page.locator("#jobs")
    for header in ("Code", "Name", "Type", "Status", "Target"):
        expect(jobs.get_by_role("columnheader", name=header, exact=True)).to_be_visible()
    expect(jobs.locator("tr[data-job='send-invoices']")).to_contain_text(
        "python:ui_handlers:invoices"
    )
    expect(jobs.locator("tr[data-job='legacy-export']")).to_contain_text("INACTIVE")

    problems = page.locator("#problem-items")
    failed = problems.locator("tr[data-job='once-only'][data-status='failed']")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text("upstream ledger is locked")
    failed.get_by_role("button", name=re.compile("^Retry item")).click()
    expect(page.get_by_role("status")).to_contain_text("Retry queued")
    # The retry is a fresh item; it fails again (one attempt) and is listed too,
    # the first failed item staying as it was.
    both = problems.locator("tr[data-job='once-only'][data-status='failed']")
    for _ in range(30):
        if both.count() == 2:
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(both).to_have_count(2)

    waiting = problems.locator("tr[data-job='slow-retry']")
    expect(waiting).to_contain_text("attempt 1/3 failed, next attempt at")
    waiting.get_by_role("button", name=re.compile("^Cancel item")).click()
    expect(page.get_by_role("status")).to_contain_text("Cancelled")
    expect(problems.locator("tr[data-job='slow-retry']")).to_have_count(0)


def test_retry_of_an_item_that_did_not_fail_is_refused_in_place(page: Any, world: World) -> None:
    add_schedule(world, "retry-refused")
    sign_in(page, world, Role.OPERATOR)
    _run_and_wait(page, "/schedules/billing/prod/retry-refused", "succeeded")
    item_id = page.locator("#run-card code").first.inner_text()
    page.goto("/jobs")
    csrf = page.locator("input[name=csrf]").first.input_value()
    answer = page.request.post(f"/items/{item_id}/retry", form={"csrf": csrf}, max_redirects=0)
    assert answer.status == 409
    assert "only failed or expired items can be retried" in answer.text()


def test_an_editor_registers_a_job_and_a_refusal_keeps_the_form(page: Any, world: World) -> None:
    sign_in(page, world, Role.EDITOR)
    page.goto("/jobs")
    form = page.locator("#job-form")
    form.get_by_label("Code").fill("zz-nightly-export")
    form.get_by_label("Stack").fill("zz-reports")
    form.get_by_label("Target").fill("command:/usr/bin/true")
    form.get_by_label("Name", exact=True).fill("Nightly export")
    form.get_by_label("Options").fill('{"max_attempts": 2}')
    form.get_by_label("Labels").fill("team=data")
    form.get_by_role("button", name="Register job").click()
    # A tenant's editor may not register a command (a platform admin may): refused,
    # the form as it was sent, nothing registered.
    expect(page.locator("[role=alert]").first).to_contain_text("X403")
    expect(form.get_by_label("Code")).to_have_value("zz-nightly-export")
    expect(form.get_by_label("Labels")).to_have_value("team=data")
    expect(page.locator("#jobs tr[data-job='zz-nightly-export']")).to_have_count(0)

    form.get_by_label("Options").fill('{"max_attempts": 2')  # not JSON
    form.get_by_label("Target").fill("python:ui_handlers:invoices")
    form.get_by_role("button", name="Register job").click()
    expect(page.locator("[role=alert]").first).to_contain_text("options is not JSON")
    expect(page.locator("#jobs tr[data-job='zz-nightly-export']")).to_have_count(0)

    form.get_by_label("Options").fill('{"max_attempts": 2}')
    form.get_by_role("button", name="Register job").click()
    expect(page.get_by_role("status")).to_contain_text("Registered job zz-nightly-export")
    row = page.locator("#jobs tr[data-job='zz-nightly-export']")
    expect(row).to_contain_text("python:ui_handlers:invoices")
    expect(row).to_contain_text("zz-reports")
    expect(row).to_contain_text("ACTIVE")
    job = ScheduleService(world.database, SystemClock()).get_job(
        TENANT, "zz-reports", "zz-nightly-export"
    )
    assert job.options["max_attempts"] == 2 and job.labels == {"team": "data"}
    assert job.title == "Nightly export"


def test_a_viewer_has_no_job_form(page: Any, world: World) -> None:
    sign_in(page, world, Role.VIEWER)
    page.goto("/jobs")
    expect(page.locator("#jobs")).to_be_visible()
    expect(page.locator("#job-form")).to_have_count(0)
