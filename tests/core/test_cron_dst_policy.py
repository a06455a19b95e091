"""The DST policy (issue 36) against the brute-force oracle, for every combination.

For each zone with an odd transition — London and New York (an hour), Lord
Howe (half an hour), Santiago (at midnight), Apia (a whole day skipped in
2011) — hypothesis draws an expression, a transition and a policy, and the
engine's occurrences over two days around the transition must equal the
oracle's minute-by-minute reading of the same policy (tests/core/cron_oracle.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from cron_oracle import fires
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.cron import parse
from cronplane.core.dst import GAPS, REPEATS, DstPolicy

ZONES = {
    "Europe/London": 2027,
    "America/New_York": 2027,
    "Australia/Lord_Howe": 2027,
    "America/Santiago": 2027,
    "Pacific/Apia": 2011,
}
MINUTES = ("*", "*/15", "0", "30", "0,30", "5-10", "59")
HOURS = ("*", "*/2", "0", "1", "2", "3", "0-3", "23")
POLICIES = [DstPolicy(gap, repeat) for gap in GAPS for repeat in (None, *REPEATS)]


@cache
def transitions(zone: str, year: int) -> tuple[datetime, ...]:
    """The instants (UTC, to the minute) the zone's offset changes in `year`."""
    tz = ZoneInfo(zone)
    found = []
    hour = datetime(year, 1, 1, tzinfo=UTC)
    while hour.year == year:
        step = hour + timedelta(hours=1)
        if hour.astimezone(tz).utcoffset() != step.astimezone(tz).utcoffset():
            minute = hour
            while minute.astimezone(tz).utcoffset() == hour.astimezone(tz).utcoffset():
                minute += timedelta(minutes=1)
            found.append(minute)
        hour = step
    return tuple(found)


@settings(max_examples=150, deadline=None)
@given(
    zone=st.sampled_from(sorted(ZONES)),
    which=st.integers(min_value=0, max_value=3),
    minute=st.sampled_from(MINUTES),
    hour=st.sampled_from(HOURS),
    policy=st.sampled_from(POLICIES),
)
def test_every_policy_agrees_with_the_minute_scan(
    zone: str, which: int, minute: str, hour: str, policy: DstPolicy
) -> None:
    changes = transitions(zone, ZONES[zone])
    assert changes, zone
    at = changes[which % len(changes)]
    start, end = at - timedelta(days=1), at + timedelta(days=1)
    expr = parse(f"{minute} {hour} * * *").expression
    want = fires(expr, ZoneInfo(zone), start, end, policy)
    got = []
    current = start
    while (found := parse(f"{minute} {hour} * * *").next_after(current, zone, policy)) and (
        found <= end
    ):
        got.append(found)
        current = found
    assert got == want, (zone, at, minute, hour, policy)


# Worked by hand: 2027-10-31, Europe/London repeats 01:00-01:59 (BST, then GMT).
FIRST_PASS = datetime(2027, 10, 31, 0, 30, tzinfo=UTC)  # 01:30 BST
SECOND_PASS = datetime(2027, 10, 31, 1, 30, tzinfo=UTC)  # 01:30 GMT
NIGHT = datetime(2027, 10, 30, 22, tzinfo=UTC)


def _night(cron: str, policy: DstPolicy, zone: str = "Europe/London") -> list[datetime]:
    return parse(cron).upcoming(NIGHT, 3, zone, policy)[:2]


def test_a_fixed_time_in_the_repeated_hour_runs_on_the_passes_the_policy_names() -> None:
    assert _night("30 1 * * *", DstPolicy())[0] == FIRST_PASS
    assert _night("30 1 * * *", DstPolicy(repeat="first"))[0] == FIRST_PASS
    assert _night("30 1 * * *", DstPolicy(repeat="second"))[0] == SECOND_PASS
    assert _night("30 1 * * *", DstPolicy(repeat="both")) == [FIRST_PASS, SECOND_PASS]


def test_a_wildcard_hour_runs_both_passes_by_default_and_one_when_asked() -> None:
    def hourly(policy: DstPolicy) -> list[datetime]:
        midnight = datetime(2027, 10, 31, 0, 0, tzinfo=UTC)  # 01:00 BST
        return parse("30 * * * *").upcoming(midnight, 2, "Europe/London", policy)

    two_thirty = datetime(2027, 10, 31, 2, 30, tzinfo=UTC)  # 02:30 GMT
    assert hourly(DstPolicy()) == [FIRST_PASS, SECOND_PASS]
    assert hourly(DstPolicy(repeat="both")) == [FIRST_PASS, SECOND_PASS]
    assert hourly(DstPolicy(repeat="first")) == [FIRST_PASS, two_thirty]
    assert hourly(DstPolicy(repeat="second")) == [SECOND_PASS, two_thirty]


def test_a_skipped_fixed_time_shifts_or_is_skipped() -> None:
    # 2027-03-28, London skips 01:00-01:59: 01:30 does not exist.
    before = datetime(2027, 3, 27, 22, tzinfo=UTC)
    jump = datetime(2027, 3, 28, 1, 0, tzinfo=UTC)  # 02:00 BST
    assert parse("30 1 * * *").next_after(before, "Europe/London") == jump
    skipped = parse("30 1 * * *").next_after(before, "Europe/London", DstPolicy(gap="skip"))
    assert skipped == datetime(2027, 3, 29, 0, 30, tzinfo=UTC)  # the next day, 01:30 BST


def test_later_moves_the_first_skipped_time_by_the_gap_and_goes_on_from_there() -> None:
    # 2027-03-28, London skips 01:00-01:59: read with GMT, 01:30 is 02:30 BST (01:30Z).
    before = datetime(2027, 3, 27, 22, tzinfo=UTC)
    later = DstPolicy(gap="later")
    assert parse("30 1 * * *").next_after(before, "Europe/London", later) == datetime(
        2027, 3, 28, 1, 30, tzinfo=UTC
    )
    # Every minute of 01:xx: the first, 01:00, runs at 02:00 BST, and the rest of the gap
    # is behind that wall time, so the next is the following night's 01:00 BST.
    assert parse("* 1 * * *").upcoming(before, 2, "Europe/London", later) == [
        datetime(2027, 3, 28, 1, 0, tzinfo=UTC),
        datetime(2027, 3, 29, 0, 0, tzinfo=UTC),
    ]
    # 01:10 moves to 02:10 BST; the real 02:30 still fires, the skipped 01:30 does not.
    assert parse("10,30 1,2 * * *").upcoming(before, 3, "Europe/London", later) == [
        datetime(2027, 3, 28, 1, 10, tzinfo=UTC),
        datetime(2027, 3, 28, 1, 30, tzinfo=UTC),
        datetime(2027, 3, 29, 0, 10, tzinfo=UTC),
    ]
