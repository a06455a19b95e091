"""A start without a zone is a wall time in the schedule's zone, in the API as in the CLI."""

from __future__ import annotations

from datetime import UTC, datetime

from cronplane.core.cron import next_fire_times, parse


def test_a_naive_start_is_utc_when_no_zone_is_given() -> None:
    naive = next_fire_times("0 * * * *", datetime(2026, 1, 1, 0, 30), 2)
    aware = next_fire_times("0 * * * *", datetime(2026, 1, 1, 0, 30, tzinfo=UTC), 2)
    assert (
        naive == aware == [datetime(2026, 1, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 2, tzinfo=UTC)]
    )


def test_a_naive_start_is_a_wall_time_in_the_given_zone() -> None:
    # 08:30 in London in summer is 07:30 UTC: the 09:00 local run is next, at 08:00 UTC.
    start = datetime(2026, 7, 1, 8, 30)
    assert next_fire_times("0 9 * * *", start, 1, "Europe/London") == [
        datetime(2026, 7, 1, 8, tzinfo=UTC)
    ]
    assert parse("0 9 * * *").next_after(start, "Europe/London") == datetime(
        2026, 7, 1, 8, tzinfo=UTC
    )
