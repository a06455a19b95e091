"""The History tab in the browser: live after Run now, retries spelled out, changes as diffs."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from typing import Any

import pytest
from ui_support import World, add_job, add_schedule

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

# A failing job whose next attempt is an hour away: it stays "retrying".
SLOW_RETRY = {"max_attempts": 3, "retry_base": 3600}


def _run_now(page: Any) -> None:
    page.get_by_role("button", name="Run now").click()
    page.get_by_role("dialog").get_by_role("button", name="Run now").click()


def test_history_updates_when_a_run_now_finishes(admin: Any, world: World) -> None:
    add_schedule(world, "live-history")
    admin.goto("/schedules/billing/prod/live-history?tab=history")
    expect(admin.locator("#items")).to_contain_text("No queue item yet.")
    _run_now(admin)
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    # No reload: the tab fetched itself again when the run finished.
    expect(admin.locator("#items tbody tr[data-status='succeeded']")).to_have_count(1)
    expect(admin.locator("#ledger")).to_contain_text("run now")
    expect(admin.locator("#last-outcome")).to_contain_text("no run yet")  # the page's own facts


def test_a_retrying_item_says_which_attempt_failed_and_when_the_next_is(
    admin: Any, world: World
) -> None:
    add_job(world, "billing", "flaky-sync", "python:ui_handlers:broken", SLOW_RETRY)
    add_schedule(world, "flaky-history", job="flaky-sync")
    admin.goto("/schedules/billing/prod/flaky-history?tab=history")
    _run_now(admin)
    retry = re.compile(r"attempt 1/3 failed, next attempt at \d\d:\d\d UTC")
    expect(admin.locator("#run-card")).to_contain_text(retry, timeout=15_000)
    expect(admin.locator("#run-card")).to_contain_text("upstream ledger is locked")
    expect(admin.locator("#items")).to_contain_text(retry)


def test_changes_are_their_own_list_with_old_new_and_actor(admin: Any, world: World) -> None:
    add_schedule(world, "diffed", cron="0 3 * * *")
    admin.goto("/schedules/billing/prod/diffed/edit")
    admin.get_by_role("tab", name="Cron").click()
    admin.get_by_label("Expression").fill("0 4 * * *")
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_have_text("Saved.")
    _run_now(admin)
    expect(admin.locator("#run-outcome")).to_have_text("succeeded", timeout=15_000)
    admin.get_by_role("tab", name="History").click()
    changes = admin.locator("#changes tbody tr")
    edit = changes.filter(has_text="updated by token:admin-browser")
    expect(edit).to_have_count(1)
    expect(edit).to_contain_text('cron: "0 3 * * *" → "0 4 * * *"')
    expect(edit.locator("td.actor")).to_have_text("token:admin-browser")
    expect(changes.filter(has_text="created by test")).to_have_count(1)
    # Run outcomes are not configuration changes.
    expect(admin.locator("#changes")).not_to_contain_text("succeeded")
    expect(admin.locator("#changes")).not_to_contain_text("run now")
    expect(admin.locator("#items")).to_contain_text("succeeded")


def test_the_run_poll_announces_each_state_the_page_has_not_shown(admin: Any, world: World) -> None:
    """A failed attempt waiting for its retry is a new state too: the History tab reloads."""
    add_job(world, "billing", "flaky-poll", "python:ui_handlers:broken", SLOW_RETRY)
    add_schedule(world, "flaky-poll", job="flaky-poll")
    admin.goto("/schedules/billing/prod/flaky-poll?tab=history")
    _run_now(admin)
    card = admin.locator("#run-card")
    expect(card).to_contain_text("attempt 1/3 failed", timeout=15_000)
    item = card.locator("code").first.inner_text()
    poll = f"/ui/items/{item}?zone=UTC&label=flaky-poll&seen="
    # The page last showed it queued before its first attempt: changed.
    assert admin.request.get(poll + "queued/0").headers.get("hx-trigger") == "run-changed"
    # It already shows the retry (queued after one attempt): nothing to reload.
    assert "hx-trigger" not in admin.request.get(poll + "queued/1").headers


def test_history_shows_who_paused_why_and_what_the_resume_and_backfill_did(
    admin: Any, world: World
) -> None:
    """Issue 39: every operator action with its actor and note, not only field changes."""
    from cronplane.clock import SystemClock
    from cronplane.core.model import Scope
    from cronplane.service import ScheduleService

    add_schedule(world, "zz-acted-on", cron="*/5 * * * *")
    service = ScheduleService(world.database, SystemClock())
    scope = Scope("demo", "billing", "prod")
    service.pause_schedule(scope, "zz-acted-on", actor="token:ops-anna", note="db migration")
    service.resume_schedule(scope, "zz-acted-on", actor="token:ops-bo")
    day = (SystemClock().now() - timedelta(days=1)).date().isoformat()
    service.backfill_schedule(
        scope, "zz-acted-on", start=f"{day}T00:00Z", end=f"{day}T00:20Z", actor="token:ops-cy"
    )
    admin.goto("/schedules/billing/prod/zz-acted-on?tab=history")
    changes = admin.locator("#changes")
    paused = changes.locator("tr", has_text="V200101SCHPAU")
    expect(paused).to_contain_text("token:ops-anna")
    expect(paused).to_contain_text("db migration")
    resumed = changes.locator("tr", has_text="V200102SCHRES")
    expect(resumed).to_contain_text("token:ops-bo")
    expect(resumed).to_contain_text("paused_by: token:ops-anna")
    backfilled = changes.locator("tr", has_text="V202103BKFENQ")
    expect(backfilled).to_contain_text("token:ops-cy")
    expect(backfilled).to_contain_text("enqueued: 4")
