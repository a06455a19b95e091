"""core.items: a job's options as its queue items' priority, expiry and attempts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cronplane.core.backoff import RetryPolicy
from cronplane.core.items import (
    DEFAULT_EXPIRY,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRIORITY,
    MANUAL_PRIORITY,
    ItemOptions,
)

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def test_defaults_without_options() -> None:
    item = ItemOptions.scheduled({})
    assert item == ItemOptions(DEFAULT_PRIORITY, DEFAULT_EXPIRY, DEFAULT_MAX_ATTEMPTS)
    assert item.expires_at(NOW) == NOW + timedelta(hours=5)
    assert RetryPolicy.from_options({}).max_attempts == item.max_attempts


def test_job_options_are_read() -> None:
    options = {"priority": 7, "expires_after": 60, "max_attempts": 2}
    assert ItemOptions.scheduled(options) == ItemOptions(7, timedelta(seconds=60), 2)
    assert RetryPolicy.from_options(options).max_attempts == 2


def test_run_now_keeps_manual_priority_and_default_expiry() -> None:
    options = {"priority": 7, "expires_after": 60, "max_attempts": 2}
    assert ItemOptions.manual(options) == ItemOptions(MANUAL_PRIORITY, DEFAULT_EXPIRY, 2)
