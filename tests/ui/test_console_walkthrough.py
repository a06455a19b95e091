"""docs/console.md's walk-through, followed as written in Chromium beside `make run`.

Each numbered step of its "Steps" section is read sentence by sentence; every
sentence must be one of the forms below (a remark after a dash is skipped), so
the document cannot say what the console does not do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from make_run_server import ROOT, make_run

try:
    from playwright.sync_api import expect
except ImportError as missing:  # the test extra installs it; CI must have it
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"Playwright is not installed: {missing}", allow_module_level=True)

DOC = ROOT / "docs" / "console.md"
SEE_TIMEOUT_MS = 20_000  # a run's outcome waits for make run's worker


def steps() -> list[str]:
    """The numbered steps of the "Steps" section, each as one line, remarks dropped."""
    section = DOC.read_text().split("## Steps", 1)[1]
    items = re.split(r"\n(?=\d+\. )", section.strip())
    found = []
    for item in items:
        text = " ".join(line.strip() for line in item.splitlines())
        text = re.sub(r"^\d+\.\s+", "", text)
        found.append(text.split(" — ", 1)[0].strip())
    return found


def _press(page: Any, name: str, in_dialog: bool) -> None:
    scope = page.locator("dialog[open]") if in_dialog else page
    button = scope.get_by_role("button", name=name, exact=True)
    if button.count():
        button.first.click()
    else:
        scope.get_by_role("link", name=name, exact=True).first.click()


def actions(page: Any, token: str) -> list[tuple[re.Pattern[str], Callable[..., None]]]:
    """The sentence forms the walk-through may use, each with what it does in `page`."""
    # A field by the words its label starts with (a label may go on: "(in Europe/London…").
    label = lambda text: page.get_by_label(re.compile("^" + re.escape(text)))  # noqa: E731
    return [
        (re.compile(r"Go to `([^`]+)`\."), lambda path: page.goto(path)),
        (
            re.compile(r"Type the admin token into \*\*([^*]+)\*\*\."),
            lambda field: label(field).fill(token),
        ),
        (
            re.compile(r"Type `([^`]+)` into \*\*([^*]+)\*\*\."),
            lambda text, field: label(field).fill(text),
        ),
        (
            re.compile(r"Choose \*\*([^*]+)\*\* in \*\*([^*]+)\*\*\."),
            lambda option, field: label(field).select_option(label=option),
        ),
        (
            re.compile(r"Press \*\*([^*]+)\*\*( in the dialog)?\."),
            lambda name, dialog: _press(page, name, bool(dialog)),
        ),
        (
            re.compile(r"Open the \*\*([^*]+)\*\* tab\."),
            lambda name: page.get_by_role("tab", name=name, exact=True).click(),
        ),
        (
            re.compile(r"See “([^”]+)”\.?"),
            lambda text: expect(page.locator("main")).to_contain_text(text, timeout=SEE_TIMEOUT_MS),
        ),
    ]


def test_the_walkthrough_reads_as_actions() -> None:
    """Every sentence of every step is a form the walk-through test knows."""
    known = [pattern for pattern, _ in actions(None, "")]
    for number, step in enumerate(steps(), 1):
        rest = step
        while rest:
            found = next((p.match(rest) for p in known if p.match(rest)), None)
            assert found, f"step {number} says what the test cannot do: {rest!r}"
            rest = rest[found.end() :].strip()


def test_the_console_walkthrough_as_written(browser: Any, tmp_path: Path) -> None:
    with make_run(tmp_path) as served:
        context = browser.new_context(base_url=served.url, locale="en-GB")
        context.set_default_timeout(10_000)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())  # a Roll back's confirm()
        known = actions(page, served.token)
        try:
            for number, step in enumerate(steps(), 1):
                rest = step
                while rest:
                    pattern, act = next((p, a) for p, a in known if p.match(rest))
                    found = pattern.match(rest)
                    assert found is not None
                    try:
                        act(*found.groups())
                    except Exception as failed:
                        shot = tmp_path / f"step-{number}.png"
                        page.screenshot(path=str(shot), full_page=True)
                        raise AssertionError(
                            f"step {number}, {found.group(0)!r}: {failed} (see {shot})"
                        ) from failed
                    rest = rest[found.end() :].strip()
        finally:
            context.close()
