"""Pause, resume, backfill and jitter in the console, in Debian's Chromium (Playwright)."""

from __future__ import annotations

import os
import re
from datetime import UTC, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from ui_support import TENANT, World, add_schedule, sign_in

from cronplane.clock import FakeClock, SystemClock
from cronplane.core.access import Role
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store.tables import queue_items

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def row(world: World, name: str) -> Any:
    service = ScheduleService(world.database, SystemClock())
    return service.get_schedule(Scope(TENANT, "billing", "prod"), name)


def test_pause_with_a_note_and_until_shows_paused_then_resume(admin: Any, world: World) -> None:
    add_schedule(world, "held-nightly")
    admin.goto("/schedules/billing/prod/held-nightly")
    expect(admin.locator("#status-badge")).to_have_text("ACTIVE")
    admin.get_by_role("button", name="Pause").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Pause .held-nightly."))
    dialog.get_by_label("Note (why)").fill("supplier outage")
    dialog.get_by_label(re.compile("Resume by itself at")).fill("2099-01-01T09:30")
    dialog.get_by_role("button", name="Pause").click()
    expect(admin.get_by_role("status")).to_have_text("Paused.")
    expect(admin.locator("#status-badge")).to_have_text("PAUSED")
    expect(admin.locator("#pause-info")).to_contain_text("supplier outage")
    expect(admin.locator("#pause-info")).to_contain_text("until")
    stored = row(world, "held-nightly")
    assert stored.paused_note == "supplier outage" and stored.paused_by.endswith("admin-browser")
    assert stored.paused_until.isoformat() == "2099-01-01T09:30:00+00:00"
    # The listing shows the state and the note.
    admin.goto("/?q=held-nightly")
    cell = admin.locator("#schedules tr[data-name='held-nightly'] .col-status")
    expect(cell).to_contain_text("PAUSED")
    expect(cell).to_contain_text("supplier outage")
    admin.goto("/schedules/billing/prod/held-nightly")
    admin.get_by_role("button", name="Resume").click()
    expect(admin.get_by_role("status")).to_have_text("Resumed.")
    expect(admin.locator("#status-badge")).to_have_text("ACTIVE")
    assert not row(world, "held-nightly").paused


def test_a_past_until_is_refused_in_place(admin: Any, world: World) -> None:
    add_schedule(world, "held-past")
    admin.goto("/schedules/billing/prod/held-past")
    admin.get_by_role("button", name="Pause").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Pause .held-past."))
    dialog.get_by_label(re.compile("Resume by itself at")).fill("2001-01-01T00:00")
    dialog.get_by_role("button", name="Pause").click()
    expect(admin.get_by_role("alert")).to_contain_text("X400102UNTINV")
    assert not row(world, "held-past").paused


def test_backfill_dialog_dry_run_then_enqueue(admin: Any, world: World) -> None:
    add_schedule(world, "filled-nightly", cron="0 3 * * *")
    admin.goto("/schedules/billing/prod/filled-nightly")
    admin.get_by_role("button", name="Backfill").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Backfill .filled-nightly."))
    dialog.get_by_label("From (inclusive)").fill("2026-01-01T00:00")
    dialog.get_by_label("To (exclusive)").fill("2026-01-04T00:00")
    dialog.get_by_label(re.compile("Dry run")).check()
    dialog.get_by_role("button", name="Backfill").click()
    expect(admin.get_by_role("status")).to_contain_text("Backfill would enqueue 3")
    schedule_id = row(world, "filled-nightly").id
    query = select(queue_items.c.scheduled_for).where(queue_items.c.schedule_id == schedule_id)
    with world.database.read() as conn:
        assert conn.execute(query).all() == []
    admin.get_by_role("button", name="Backfill").click()
    dialog.get_by_label("From (inclusive)").fill("2026-01-01T00:00")
    dialog.get_by_label("To (exclusive)").fill("2026-01-04T00:00")
    dialog.get_by_role("button", name="Backfill").click()
    expect(admin.get_by_role("status")).to_have_text("Backfill enqueued 3.")
    with world.database.read() as conn:
        days = sorted(at.day for (at,) in conn.execute(query))
    assert days == [1, 2, 3]
    # A reversed range is a coded error shown in place.
    admin.get_by_role("button", name="Backfill").click()
    dialog.get_by_label("From (inclusive)").fill("2026-01-04T00:00")
    dialog.get_by_label("To (exclusive)").fill("2026-01-01T00:00")
    dialog.get_by_role("button", name="Backfill").click()
    expect(admin.get_by_role("alert")).to_contain_text("X400103BKFRNG")


def test_jitter_is_edited_like_any_field(admin: Any, world: World) -> None:
    add_schedule(world, "spread-nightly", cron="0 3 * * *")
    admin.goto("/schedules/billing/prod/spread-nightly/edit")
    admin.get_by_label(re.compile("Jitter")).fill("3600")
    admin.get_by_role("button", name="Save").click()
    stored = row(world, "spread-nightly")
    assert stored.jitter == 3600 and 0 <= stored.jitter_offset < 3600
    expect(admin.locator("#jitter-hint")).to_contain_text(f"{stored.jitter_offset} s")
    admin.get_by_role("link", name="Edit", exact=True).click()
    admin.get_by_label(re.compile("Jitter")).fill("-4")
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("alert")).to_contain_text("X400100JITINV")


def test_a_viewer_sees_no_pause_or_backfill(page: Any, world: World) -> None:
    add_schedule(world, "viewed-nightly")
    sign_in(page, world, Role.VIEWER)
    page.goto("/schedules/billing/prod/viewed-nightly")
    expect(page.locator("#status-badge")).to_have_text("ACTIVE")
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    expect(page.get_by_role("button", name="Backfill")).to_have_count(0)


def test_resume_runs_the_latest_occurrence_the_pause_passed(admin: Any, world: World) -> None:
    add_schedule(world, "zz-held-hourly", cron="0 * * * *")
    earlier = FakeClock(SystemClock().now() - timedelta(hours=3))
    ScheduleService(world.database, earlier).pause_schedule(
        Scope(TENANT, "billing", "prod"), "zz-held-hourly", actor="test", note="maintenance"
    )
    admin.goto("/schedules/billing/prod/zz-held-hourly")
    admin.get_by_label("What the pause passed").select_option("once")
    admin.get_by_role("button", name="Resume").click()
    expect(admin.get_by_role("status")).to_have_text("Resumed; missed occurrences: once.")
    stored = row(world, "zz-held-hourly")
    assert not stored.paused
    with world.database.read() as conn:
        found = conn.execute(
            select(queue_items.c.scheduled_for).where(queue_items.c.schedule_id == stored.id)
        ).all()
    latest = SystemClock().now().replace(minute=0, second=0, microsecond=0)
    assert [r.scheduled_for.replace(tzinfo=UTC) for r in found] == [latest]  # one, the latest
