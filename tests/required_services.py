"""The one rule for a missing service (PostgreSQL, a broker, Chromium, promtool).

Locally a test whose service is missing skips; under CI (`CI=true`) it fails,
so a CI run can never pass by skipping what it was meant to check. Test
modules import this explicitly (`pythonpath = ["tests"]` in pyproject.toml).
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def under_ci() -> bool:
    """CI sets CI=true: there a missing service fails the test instead of skipping it."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_service(name: str, error: BaseException | str) -> NoReturn:
    """Skip locally when a service is missing; fail under CI."""
    message = f"{name} is not available: {error}"
    if under_ci():
        pytest.fail(message + " (CI=true: services must run)", pytrace=False)
    pytest.skip(message)
