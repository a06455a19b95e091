"""Browser fixtures: one served world per session, Debian's Chromium, a page per test.

Chromium is `/usr/bin/chromium` (Debian's package; never a downloaded
browser). When it or Playwright is missing the tests skip locally and fail
under CI=true (`require_service`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oidc_idp import OidcWorld, Provider, providing, served
from ui_support import World, serving, sign_in

from cronplane.api.app import create_app
from cronplane.clock import SystemClock
from cronplane.core.access import Role
from required_services import require_service

CHROMIUM = os.environ.get("CRONPLANE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The API + UI served over a seeded SQLite file, with a worker."""
    with serving(tmp_path_factory.mktemp("ui") / "cronplane.db") as served:
        yield served


@pytest.fixture(scope="session")
def oidc_world(world: World) -> Iterator[OidcWorld]:
    """A second console (API + UI, uvicorn on its own port) over the world's database, with
    CRONPLANE_OIDC_* pointing at a test provider served beside it (tests/ui/oidc_idp.py)."""
    with providing() as provider:
        app = create_app(world.database, SystemClock(), ui=True, oidc=provider.settings())
        with served(app) as url:
            yield OidcWorld(url, provider, world)


@pytest.fixture
def idp(oidc_world: OidcWorld) -> Iterator[Provider]:
    """The test provider, honest again after the test."""
    yield oidc_world.provider
    oidc_world.provider.reset()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium driven by Playwright (sync API)."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as error:
        require_service("Playwright", error)
    if not Path(CHROMIUM).exists():
        require_service("Chromium", FileNotFoundError(CHROMIUM))
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
    except Error as error:
        playwright.stop()
        require_service("Chromium", error)
    yield chromium
    chromium.close()
    playwright.stop()


@pytest.fixture
def page(browser: Any, world: World) -> Iterator[Any]:
    """A fresh browser context (no cookies) and page on the served world."""
    context = browser.new_context(
        base_url=world.url, viewport={"width": 1360, "height": 860}, locale="en-GB"
    )
    context.set_default_timeout(10_000)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def admin(page: Any, world: World) -> Any:
    """A page signed in as the demo tenant's admin."""
    sign_in(page, world, Role.ADMIN)
    return page
