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


def _platform(world: World, role: Role) -> str:
    service = ScheduleService(world.database, SystemClock())
    return service.tokens.create(tenant=None, role=role, actor="test").secret


def test_a_platform_token_signs_in_without_a_tenant_and_switches(page: Any, world: World) -> None:
    """Issue 39: no tenant to name at sign-in; the Tenants page chooses, the header switches."""
    service = ScheduleService(world.database, SystemClock())
    service.set_quota("zz-switch-co", {"max_jobs": 3}, actor="test")
    page.goto("/login")
    page.get_by_label("API token").fill(_platform(world, Role.VIEWER))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(world.url + "/tenants")
    expect(page.locator(".account")).to_contain_text("none chosen")
    # A page that needs a tenant sends the session back here to choose one.
    page.goto("/jobs")
    page.wait_for_url("**/tenants?reason=*")
    expect(page.get_by_role("status")).to_contain_text("Choose a tenant to manage.")
    page.get_by_role("button", name="Manage zz-switch-co").click()
    page.wait_for_url(world.url + "/")
    expect(page.locator(".account")).to_contain_text("Tenant zz-switch-co")
    page.locator(".account").get_by_role("link", name="Switch").click()
    page.wait_for_url(world.url + "/tenants")
    expect(page.locator('tr[data-tenant="zz-switch-co"]')).to_contain_text("managing")
    # A tenant that holds nothing yet can be chosen by name; a bad name is a coded 400.
    page.get_by_label("Manage tenant").fill("not a name!")
    page.get_by_role("button", name="Manage", exact=True).click()
    expect(page.locator("body")).to_contain_text("X400005NAMINV")
    page.get_by_label("Manage tenant").fill(TENANT)
    page.get_by_role("button", name="Manage", exact=True).click()
    page.wait_for_url(world.url + "/")
    expect(page.locator(".account")).to_contain_text(f"Tenant {TENANT}")
    # A viewer may look, not set quotas.
    page.goto("/tenants")
    expect(page.locator("summary", has_text="Quota")).to_have_count(0)


def test_a_platform_admin_edits_a_quota_and_a_bad_one_changes_nothing(
    page: Any, world: World
) -> None:
    service = ScheduleService(world.database, SystemClock())
    service.set_quota("zz-quota-co", {"max_queued": 50}, actor="test")
    page.goto("/login")
    page.get_by_label("API token").fill(_platform(world, Role.ADMIN))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(world.url + "/tenants")
    row = page.locator('tr[data-tenant="zz-quota-co"]')
    row.get_by_label("Quota of zz-quota-co").first.click()
    row.get_by_label("Jobs").fill("seven")
    row.get_by_role("button", name="Save quota").click()
    expect(page.locator("body")).to_contain_text("X400007REQINV")
    assert service.tenant_usage("zz-quota-co").overrides.max_jobs is None  # nothing written
    row = page.locator('tr[data-tenant="zz-quota-co"]')
    row.get_by_label("Quota of zz-quota-co").first.click()
    row.get_by_label("Jobs").fill("7")
    row.get_by_label("Queued").fill("")  # back to the platform's default
    row.get_by_role("button", name="Save quota").click()
    page.wait_for_url("**/tenants?reason=*")
    expect(page.get_by_role("status")).to_contain_text("Quota of zz-quota-co saved.")
    expect(page.locator('tr[data-tenant="zz-quota-co"] [data-usage="jobs"]')).to_contain_text(
        "0 / 7"
    )
    own = service.tenant_usage("zz-quota-co").overrides
    assert (own.max_jobs, own.max_queued) == (7, None)
