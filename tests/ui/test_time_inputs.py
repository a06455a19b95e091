"""Every time input is 24-hour ISO in a named zone, with its UTC instant shown live,
and what is stored is what was shown (Chromium, Playwright)."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from ui_support import TENANT, World, add_schedule

from cronplane.clock import SystemClock
from cronplane.core.inputs import SchedulePatch
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_the_pause_until_shows_its_utc_instant_and_stores_it(admin: Any, world: World) -> None:
    add_schedule(world, "zz-berlin-until", timezone="Europe/Berlin")
    admin.goto("/schedules/billing/prod/zz-berlin-until")
    admin.get_by_role("button", name="Pause").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Pause .zz-berlin-until."))
    until = dialog.get_by_label(re.compile("Resume by itself at"))
    expect(until).to_have_attribute("type", "text")  # no browser 12-hour widget
    expect(dialog.locator(".time-input .zone-name")).to_have_text("Europe/Berlin")
    shown = dialog.locator("#pause-until-utc")

    until.fill("half past nine")
    expect(shown).to_contain_text("Not a time")
    until.fill("2099-03-29 02:30")  # Berlin's clock skips 02:00-03:00 that night
    expect(shown).to_contain_text("= 2099-03-29 01:30 UTC")
    expect(shown).to_contain_text("does not exist in Europe/Berlin: read as 03:30 CEST")
    until.fill("2099-07-01 09:30")
    expect(shown).to_have_text("= 2099-07-01 07:30 UTC")

    dialog.get_by_role("button", name="Pause").click()
    expect(admin.get_by_role("status")).to_have_text("Paused.")
    stored = ScheduleService(world.database, SystemClock()).get_schedule(
        Scope(TENANT, "billing", "prod"), "zz-berlin-until"
    )
    assert stored.paused_until is not None
    assert stored.paused_until.isoformat() == "2099-07-01T07:30:00+00:00"


def test_the_backfill_range_is_typed_in_the_rows_zone(admin: Any, world: World) -> None:
    add_schedule(world, "zz-kl-backfill", timezone="Asia/Kuala_Lumpur")
    admin.goto("/schedules/billing/prod/zz-kl-backfill")
    admin.get_by_role("button", name="Backfill").click()
    dialog = admin.get_by_role("dialog", name=re.compile("Backfill .zz-kl-backfill."))
    dialog.get_by_label(re.compile("From \\(inclusive\\)")).fill("2026-01-01 08:00")
    expect(dialog.locator("#backfill-from-utc")).to_have_text("= 2026-01-01 00:00 UTC")
    dialog.get_by_label(re.compile("To \\(exclusive\\)")).fill("2026-01-01T09:00+08:00")
    expect(dialog.locator("#backfill-to-utc")).to_have_text("= 2026-01-01 01:00 UTC")


def test_the_window_is_shown_and_typed_in_the_rows_zone_and_kept_when_untouched(
    admin: Any, world: World
) -> None:
    add_schedule(world, "zz-berlin-window", timezone="Europe/Berlin")
    service = ScheduleService(world.database, SystemClock())
    scope = Scope(TENANT, "billing", "prod")
    ends = datetime(2099, 10, 25, 1, 30, tzinfo=UTC)  # 02:30, the repeated hour's 2nd pass
    service.update_schedule(scope, "zz-berlin-window", SchedulePatch(end_at=ends), actor="test")
    admin.goto("/schedules/billing/prod/zz-berlin-window/edit")
    end_at = admin.get_by_label(re.compile("^End at"))
    expect(end_at).to_have_value("2099-10-25 02:30+01:00")  # the offset says which pass
    start_at = admin.get_by_label(re.compile("^Start at"))
    start_at.fill("2099-07-01 09:30")
    expect(admin.locator("#start_at-utc")).to_have_text("= 2099-07-01 07:30 UTC")
    admin.get_by_role("button", name="Save").click()
    expect(admin.get_by_role("status")).to_have_text("Saved.")
    stored = service.get_schedule(scope, "zz-berlin-window")
    assert stored.start_at == datetime(2099, 7, 1, 7, 30, tzinfo=UTC)
    assert stored.end_at == ends  # shown, saved untouched: not moved by an hour
