"""The Tenants page (issue 18): a platform token sees every tenant's usage against its quota;
a tenant's token has no Tenants link and is refused the page (403)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from ui_support import TENANT, World, sign_in

from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)


def test_platform_token_sees_usage_against_quotas(page: Any, world: World) -> None:
    service = ScheduleService(world.database, SystemClock())
    # Another tenant that so far has only a quota; the seeded tenant keeps the defaults.
    service.set_quota("initech", {"max_jobs": 5, "max_queued": 20}, actor="test")
    platform = service.tokens.create(tenant=None, role=Role.VIEWER, actor="test").secret
    page.goto("/login")
    page.get_by_label("API token").fill(platform)
    page.get_by_label("Tenant").fill(TENANT)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(world.url + "/")
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Tenants").click()
    page.wait_for_url(world.url + "/tenants")
    expect(page.get_by_role("heading", name="Tenants")).to_be_visible()
    initech = page.locator('tr[data-tenant="initech"]')
    expect(initech.locator('[data-usage="jobs"]')).to_contain_text("0 / 5")
    expect(initech.locator('[data-usage="queued"]')).to_contain_text("0 / 20")
    demo = page.locator(f'tr[data-tenant="{TENANT}"]')
    used = service.tenant_usage(TENANT)
    expect(demo.locator('[data-usage="schedules"]')).to_have_text(str(used.schedules))
    expect(demo.locator('[data-usage="fires-per-minute"]')).to_have_text("—")


def test_tenant_token_is_refused_the_page(page: Any, world: World) -> None:
    sign_in(page, world, Role.ADMIN)
    nav = page.get_by_role("navigation", name="Sections")
    expect(nav.get_by_role("link", name="Jobs")).to_be_visible()
    expect(nav.get_by_role("link", name="Tenants")).to_have_count(0)
    answer = page.goto("/tenants")
    assert answer is not None and answer.status == 403
    expect(page.locator("body")).to_contain_text("X403001FORBID")
