"""What each role is shown: never an edit it may not make (the server refuses anyway)."""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest
from ui_support import World, sign_in

from cronplane.core.access import PLATFORM_ONLY, Action, Principal, Role, permits
from cronplane.ui.session import Permissions, Session

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

EDIT_HINT = "may be changed here"


def test_permissions_are_real_attributes_per_action() -> None:
    assert set(Permissions.__dataclass_fields__) == {action.value for action in Action}
    for role, tenant in itertools.product(Role, ("demo", None)):
        session = Session(Principal(None, tenant, role, "p"), "demo", "csrf")
        can = session.permissions
        for action in Action:
            # Tenants and their quotas are a platform token's only (issue 18).
            expected = permits(role, action) and (tenant is None or action not in PLATFORM_ONLY)
            assert getattr(can, action.value) is expected, (role, tenant, action)


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_no_edit_hint_on_an_app_row_for_a_role_that_may_not_edit(
    page: Any, world: World, role: Role
) -> None:
    sign_in(page, world, role)
    page.goto("/schedules/shop/prod/pack-orders")
    expect(page.get_by_role("heading", level=1)).to_have_text("pack-orders")
    expect(page.get_by_text(EDIT_HINT)).to_have_count(0)
    for name in ("Save", "Reset to manifest", "Delete", "Choose job…"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_label("Search zones")).to_have_count(0)


def test_an_editor_is_told_what_an_app_row_lets_them_change(page: Any, world: World) -> None:
    sign_in(page, world, Role.EDITOR)
    page.goto("/schedules/shop/prod/pack-orders")
    expect(page.get_by_text(EDIT_HINT)).to_be_visible()


def test_a_viewer_sees_no_action_anywhere(page: Any, world: World) -> None:
    sign_in(page, world, Role.VIEWER)
    listing = page.locator("#schedules")
    expect(listing.locator("tbody tr").first).to_be_visible()
    expect(listing.get_by_role("checkbox")).to_have_count(0)
    expect(listing.get_by_role("columnheader", name="Actions")).to_have_count(0)
    for name in ("Run", "Enable", "Disable", "Enable selected", "Disable selected"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_role("link", name="New schedule")).to_have_count(0)

    page.get_by_role("link", name="Jobs").click()
    expect(page.locator("#jobs tbody tr").first).to_be_visible()
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)

    csrf = page.locator("input[name=csrf]").first.input_value()
    forged = page.request.post(
        "/schedules/bulk",
        form={"csrf": csrf, "row": "disable 1 billing/prod/invoices-sweep"},
        max_redirects=0,
    )
    assert forged.status == 403
    assert "X403001FORBID" in forged.text()
    ran = page.request.post(
        "/ui/run",
        form={"csrf": csrf, "stack": "billing", "environment": "prod", "name": "invoices-sweep"},
        max_redirects=0,
    )
    assert ran.status == 403
