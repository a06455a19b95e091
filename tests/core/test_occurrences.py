"""core/occurrences: a schedule's next run and its first run (the five-year rule)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cronplane.core.occurrences import first_run, next_run, next_run_function
from cronplane.errors import CronRejected, ScheduleSyntax, UnknownZone

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def test_next_run_is_strictly_after() -> None:
    on_the_hour = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
    assert next_run("0 * * * *", "UTC", on_the_hour) == datetime(2026, 3, 7, 13, 0, tzinfo=UTC)


def test_next_run_in_a_zone() -> None:
    # 02:30 New York does not exist on 2026-03-08: it fires at the jump (07:00 UTC).
    found = next_run("30 2 * * *", "America/New_York", NOW)
    assert found == datetime(2026, 3, 8, 7, 0, tzinfo=UTC)


def test_next_run_none_when_nothing_is_left() -> None:
    assert next_run("0 0 1 1 *", "UTC", datetime(9999, 6, 1, tzinfo=UTC)) is None


def test_next_run_raises_the_parser_and_zone_errors() -> None:
    with pytest.raises(ScheduleSyntax):
        next_run("61 * * * *", "UTC", NOW)
    with pytest.raises(UnknownZone):
        next_run("@daily", "Mars/Olympus", NOW)


def test_first_run_is_next_run_within_five_years() -> None:
    assert first_run("@daily", "UTC", NOW) == next_run("@daily", "UTC", NOW)
    with pytest.raises(CronRejected, match="never fires in the next five years"):
        first_run("0 0 29 2 *", "UTC", datetime(2096, 3, 1, tzinfo=UTC))


def test_first_run_answers_a_parser_rejection_with_the_service_code() -> None:
    with pytest.raises(CronRejected) as caught:
        first_run("61 * * * *", "UTC", NOW)
    assert caught.value.code.text == "X400001CRNINV"
    assert "'61 * * * *'" in caught.value.message
    assert isinstance(caught.value.__cause__, ScheduleSyntax)


def test_next_run_function_fails_when_called_not_when_made() -> None:
    broken = next_run_function("61 * * * *", "UTC")
    with pytest.raises(ScheduleSyntax):
        broken(NOW)
    assert next_run_function("@hourly", "UTC")(NOW) == datetime(2026, 3, 7, 13, 0, tzinfo=UTC)
