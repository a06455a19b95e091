"""core/explain: the one answer behind the API's cron/explain, the editor and the CLI."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cronplane.core.explain import explain
from cronplane.errors import CronRejected, ScheduleSyntax, UnknownZone

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_normalized_described_and_the_next_runs() -> None:
    found = explain("at 02:30", "Europe/London", NOW, 3)
    assert (found.expression, found.normalized) == ("at 02:30", "30 2 * * *")
    assert found.description == "At 02:30, every day"
    assert found.timezone == "Europe/London"
    assert found.next == (
        datetime(2026, 3, 1, 2, 30, tzinfo=UTC),
        datetime(2026, 3, 2, 2, 30, tzinfo=UTC),
        datetime(2026, 3, 3, 2, 30, tzinfo=UTC),
    )
    assert found.cron.fixed_time


def test_a_naive_start_is_a_wall_time_in_the_zone() -> None:
    naive = explain("0 * * * *", "Asia/Kolkata", datetime(2026, 1, 1, 0, 0), 1)
    assert naive.next == (datetime(2025, 12, 31, 19, 30, tzinfo=UTC),)


def test_seed_resolves_h() -> None:
    assert explain("H H * * *", "UTC", NOW, 1, "a/b").normalized == (
        explain("H H * * *", "UTC", NOW, 1, "a/b").normalized
    )


def test_a_rejected_expression_is_the_service_code_with_the_parser_detail() -> None:
    with pytest.raises(CronRejected) as caught:
        explain("99 * * * *", "UTC", NOW, 5)
    error = caught.value
    assert error.code.text == "X400001CRNINV"
    assert error.message == "cron '99 * * * *' rejected: minute: '99': 99 is out of range 0-59"
    assert error.detail == {
        "field": "minute",
        "cron": "99 * * * *",
        "expression": "99 * * * *",
        "reason": "'99': 99 is out of range 0-59",
    }
    assert isinstance(error.__cause__, ScheduleSyntax)


def test_the_zone_is_checked_first() -> None:
    with pytest.raises(UnknownZone):
        explain("99 * * * *", "Mars/Olympus", NOW, 5)
