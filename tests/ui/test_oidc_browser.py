"""OIDC sign-in in Debian's Chromium (Playwright): the button, the provider's page, the
console as the mapped tenant and role; an editor pauses (recorded as `oidc:<email>`), a
viewer cannot; a user with several tenants switches in the header."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oidc_idp import OidcWorld, Provider
from ui_support import TENANT, World, add_schedule

from cronplane.clock import SystemClock
from cronplane.core.model import Scope
from cronplane.service import ScheduleService

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "pages"


@pytest.fixture
def tab(browser: Any, oidc_world: OidcWorld, idp: Provider) -> Iterator[Any]:
    """A fresh browser context (no cookies) on the console with OIDC sign-in."""
    context = browser.new_context(
        base_url=oidc_world.url, viewport={"width": 1360, "height": 860}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


def sign_in_with_provider(tab: Any, oidc_world: OidcWorld, user: str) -> None:
    """Click the button, sign in on the provider's page, land back in the console."""
    tab.goto("/login")
    tab.get_by_role("link", name="Sign in with Test IdP").click()
    expect(tab.get_by_role("heading", name="Test IdP")).to_be_visible()
    assert tab.url.startswith(oidc_world.provider.url + "/authorize?")
    tab.get_by_label("Username").fill(user)
    tab.get_by_role("button", name="Approve").click()
    tab.wait_for_url(re.compile(re.escape(oidc_world.url) + "/"))


def test_an_editor_signs_in_with_the_provider_and_pauses(
    tab: Any, oidc_world: OidcWorld, world: World
) -> None:
    add_schedule(world, "zz-oidc-browser-pause")
    sign_in_with_provider(tab, oidc_world, "zz-edith")
    account = tab.get_by_role("navigation", name="Account")
    expect(account).to_contain_text(f"Tenant {TENANT}")
    expect(account).to_contain_text("Edith Editor")
    expect(account.locator(".badge.role")).to_have_text("editor")
    tab.goto("/schedules/billing/prod/zz-oidc-browser-pause")
    tab.get_by_role("button", name="Pause").click()
    dialog = tab.get_by_role("dialog", name=re.compile("Pause .zz-oidc-browser-pause."))
    dialog.get_by_label("Note (why)").fill("paused through OIDC")
    dialog.get_by_role("button", name="Pause").click()
    expect(tab.get_by_role("status")).to_have_text("Paused.")
    expect(tab.locator("#status-badge")).to_have_text("PAUSED")
    service = ScheduleService(world.database, SystemClock())
    scope = Scope(TENANT, "billing", "prod")
    assert service.get_schedule(scope, "zz-oidc-browser-pause").paused_by == (
        "oidc:edith@example.test"
    )
    history = service.schedule_history(scope, "zz-oidc-browser-pause")
    assert history[0].actor == "oidc:edith@example.test"
    # Sign-out ends it: the next page asks to sign in again.
    account.get_by_role("button", name="Sign out").click()
    expect(tab.get_by_role("link", name="Sign in with Test IdP")).to_be_visible()
    tab.goto("/")
    assert "/login" in tab.url


def test_a_viewer_signed_in_with_the_provider_cannot_pause(
    tab: Any, oidc_world: OidcWorld, world: World
) -> None:
    add_schedule(world, "zz-oidc-browser-viewed")
    sign_in_with_provider(tab, oidc_world, "zz-victor")
    expect(tab.get_by_role("navigation", name="Account").locator(".badge.role")).to_have_text(
        "viewer"
    )
    tab.goto("/schedules/billing/prod/zz-oidc-browser-viewed")
    expect(tab.locator("#status-badge")).to_have_text("ACTIVE")
    expect(tab.get_by_role("button", name="Pause")).to_have_count(0)


def test_an_unmapped_user_sees_the_coded_refusal(tab: Any, oidc_world: OidcWorld) -> None:
    tab.goto("/login")
    tab.get_by_role("link", name="Sign in with Test IdP").click()
    tab.get_by_label("Username").fill("zz-nobody")
    tab.get_by_role("button", name="Approve").click()
    expect(tab.get_by_role("alert")).to_contain_text("X403390OIDROL")
    expect(tab.get_by_role("navigation", name="Account")).to_have_count(0)


def test_a_user_with_several_tenants_switches_in_the_header(
    tab: Any, oidc_world: OidcWorld
) -> None:
    sign_in_with_provider(tab, oidc_world, "zz-multi")
    switch = tab.get_by_label("Tenant", exact=True)
    expect(switch).to_have_value(TENANT)
    expect(tab.get_by_role("navigation", name="Account").locator(".badge.role")).to_have_text(
        "operator"
    )
    expect(tab.locator("#schedules")).to_contain_text("invoices-sweep")
    switch.select_option("zz-oidc-other")
    tab.get_by_role("button", name="Switch").click()
    expect(tab.get_by_label("Tenant", exact=True)).to_have_value("zz-oidc-other")
    expect(tab.get_by_role("navigation", name="Account").locator(".badge.role")).to_have_text(
        "viewer"
    )
    expect(tab.get_by_text("invoices-sweep")).to_have_count(0)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_oidc_sign_in_and_the_switcher_fit_the_width(
    browser: Any, oidc_world: OidcWorld, idp: Provider, tmp_path: Path, width: int
) -> None:
    out = DOCS if os.environ.get("CRONPLANE_SCREENSHOTS") == "1" else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(
        base_url=oidc_world.url, viewport={"width": width, "height": 900}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        page.goto("/login")
        expect(page.get_by_role("link", name="Sign in with Test IdP")).to_be_in_viewport()
        expect(page.get_by_label("API token")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(out / f"login-oidc-{width}.png"), full_page=True)
        sign_in_with_provider(page, oidc_world, "zz-multi")
        expect(page.locator("#schedules")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if width > 390:  # the header's account details are hidden on a phone, as before
            expect(page.get_by_label("Tenant", exact=True)).to_be_in_viewport()
        page.screenshot(path=str(out / f"listing-oidc-{width}.png"), full_page=False)
    finally:
        context.close()
