"""Schedules in seconds (issue 16): the forms, their normal form, their occurrences.

The invariants, each a Hypothesis property:

- `every N seconds` and `@every Ns` fire at exactly the instants t with
  t mod N = 0 in Unix time, in every zone; the first strictly after the start;
- N seconds that make whole minutes normalize exactly as `every N/60 minutes`
  did before seconds existed (`reference_every`, a frozen copy of that rule),
  and `@every Ns` as `@every N/60 m`: no existing output moves;
- mixed units (`@every 1h30m`, `@every 1m30s`, `every 1 minute 30 seconds`)
  are their sum in seconds;
- the normal form parses to itself and to the same occurrences;
- `interval_seconds` is the period and `check_min_interval` refuses exactly
  the periods below the minimum.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.cron import parse
from cronplane.core.validation import check_min_interval
from cronplane.errors import IntervalTooShort, ScheduleSyntax

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_SECONDS = 3650 * 86_400
ZONES = ["UTC", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham"]


def reference_every(count: int, unit: str) -> str:
    """`every N minutes|hours|days` as normalized before seconds existed (frozen copy)."""
    minutes = count * {"minute": 1, "hour": 60, "day": 1440}[unit]
    if minutes % 1440 == 0:
        return "0 0 * * *" if minutes == 1440 else reference_interval(minutes)
    if minutes % 60 == 0:
        hours = minutes // 60
        return f"0 */{hours} * * *" if 24 % hours == 0 else reference_interval(minutes)
    return f"*/{minutes} * * * *" if 60 % minutes == 0 else reference_interval(minutes)


def reference_interval(minutes: int) -> str:
    """`@every N(m|h|d)` as normalized before seconds existed."""
    for unit, size in (("d", 1440), ("h", 60), ("m", 1)):
        if minutes % size == 0:
            return f"@every {minutes // size}{unit}"
    raise AssertionError


def seconds_of(instant: datetime) -> float:
    return (instant - EPOCH).total_seconds()


# --- examples ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("every 10 seconds", "@every 10s"),
        ("every 1 second", "@every 1s"),
        ("every second", "@every 1s"),
        ("every 30 seconds", "@every 30s"),
        ("Every 90 Seconds", "@every 90s"),
        ("every 45 second", "@every 45s"),
        ("@every 10s", "@every 10s"),
        ("@every 90s", "@every 90s"),
        ("@every 10 s", "@every 10s"),
        ("@EVERY 10S", "@every 10s"),
        # whole minutes, hours, days: exactly as the minute/hour/day rules say
        ("every 60 seconds", "*/1 * * * *"),  # = every 1 minute
        ("every 120 seconds", "*/2 * * * *"),
        ("every 300 seconds", "*/5 * * * *"),
        ("every 420 seconds", "@every 7m"),  # = every 7 minutes
        ("every 3600 seconds", "0 */1 * * *"),  # = every 1 hour
        ("every 7200 seconds", "0 */2 * * *"),
        ("every 86400 seconds", "0 0 * * *"),
        ("every 172800 seconds", "@every 2d"),
        ("@every 60s", "@every 1m"),
        ("@every 3600s", "@every 1h"),
        ("@every 86400s", "@every 1d"),
        # mixed units: their sum, canonical
        ("@every 1m30s", "@every 90s"),
        ("@every 1h30m", "@every 90m"),
        ("@every 1h 30m", "@every 90m"),
        ("@every 1d12h", "@every 36h"),
        ("@every 1h0m", "@every 1h"),
        ("@every 2m0s", "@every 2m"),
        ("@every 1d1s", "@every 86401s"),
        ("every 1 minute 30 seconds", "@every 90s"),
        ("every 1 minute and 30 seconds", "@every 90s"),
        ("every 1 hour 30 minutes", "@every 90m"),
        ("every 2 minutes 0 seconds", "*/2 * * * *"),
    ],
)
def test_seconds_forms(text: str, normalized: str) -> None:
    assert parse(text).normalized == normalized


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("every 0 seconds", "interval", "at least 1"),
        ("@every 0s", "interval", "between 1 second and 3650 days"),
        ("@every 0m0s", "interval", "between 1 second and 3650 days"),
        (f"every {MAX_SECONDS + 1} seconds", "interval", "between 1 second and 3650 days"),
        ("@every 30s1m", "interval", "largest unit first"),
        ("@every 1m1m", "interval", "largest unit first"),
        ("@every 1m 30", "interval", "expected @every N"),
        ("@every 1.5s", "interval", "expected @every N"),
        ("@every 5x", "interval", "unknown unit 'x'"),
        ("@every 1w", "interval", "unknown unit 'w'"),
        ("every 30 seconds 1 minute", "interval", "largest unit first"),
        ("every seconds", "interval", "how many"),
    ],
)
def test_seconds_rejections(text: str, field: str, says: str) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text)
    assert caught.value.detail["field"] == field
    assert says in caught.value.message


def test_every_10_seconds_fires_on_every_10_second_instant() -> None:
    cron = parse("every 10 seconds")
    assert cron.is_interval and not cron.fixed_time
    start = datetime(2026, 3, 8, 6, 59, 55, 500_000, tzinfo=UTC)
    expected = [datetime(2026, 3, 8, 7, 0, s, tzinfo=UTC) for s in (0, 10, 20, 30, 40, 50)]
    assert cron.upcoming(start, 6, "America/New_York") == expected  # across the DST jump
    assert cron.next_after(datetime(2026, 3, 8, 7, 0, 10, tzinfo=UTC)) == expected[2]


def test_90_seconds_is_anchored_at_the_epoch() -> None:
    cron = parse("@every 1m30s")
    got = cron.upcoming(datetime(2026, 1, 1, tzinfo=UTC), 3, "Europe/Berlin")
    # 2026-01-01T00:00Z is 1,767,225,600 s, a multiple of 90.
    assert got == [
        datetime(2026, 1, 1, 0, 1, 30, tzinfo=UTC) + timedelta(seconds=90 * k) for k in range(3)
    ]


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("every 10 seconds", "Every 10 seconds, counted from 1970-01-01 00:00 UTC"),
        ("every 1 second", "Every second, counted from 1970-01-01 00:00 UTC"),
        ("@every 1m30s", "Every 90 seconds, counted from 1970-01-01 00:00 UTC"),
        ("@every 86401s", "Every 86401 seconds, counted from 1970-01-01 00:00 UTC"),
        # unchanged
        ("every 7 minutes", "Every 7 minutes, counted from 1970-01-01 00:00 UTC"),
        ("@every 1m", "Every minute, counted from 1970-01-01 00:00 UTC"),
        ("@every 90m", "Every 90 minutes, counted from 1970-01-01 00:00 UTC"),
    ],
)
def test_description(text: str, description: str) -> None:
    assert parse(text).describe() == description


def test_interval_seconds_and_shortest_gap() -> None:
    assert parse("every 10 seconds").interval_seconds == 10
    assert parse("@every 90m").interval_seconds == 5400
    assert parse("*/5 * * * *").interval_seconds is None  # a cron, not an exact interval
    assert parse("every 10 seconds").shortest_gap == 10
    assert parse("* * * * *").shortest_gap == 60
    assert parse("*/15 9-17 * * MON-FRI").shortest_gap == 15 * 60
    assert parse("0 * * * *").shortest_gap == 3600
    assert parse("59 23 * * *").shortest_gap == 86_400
    assert parse("0,30 0,23 * * *").shortest_gap == 1800
    # 23:50 one day and 00:10 the next: 20 minutes, days in a row
    assert parse("10,50 0,23 * * *").shortest_gap == 20 * 60
    # ... but Mondays only: never one day after the other
    assert parse("10,50 0,23 * * 1").shortest_gap == 40 * 60


def test_check_min_interval_names_the_minimum() -> None:
    assert check_min_interval(parse("every 10 seconds"), 10).normalized == "@every 10s"
    check_min_interval(parse("* * * * *"), 1)
    with pytest.raises(IntervalTooShort) as caught:
        check_min_interval(parse("every 1 second"), 10)
    error = caught.value
    assert error.code.text == "X400010INTMIN"
    assert error.status == 400
    assert error.message == (
        "cron '@every 1s' fires every 1 second; "
        "the minimum interval on this installation is 10 seconds"
    )
    assert error.detail == {
        "field": "cron",
        "cron": "@every 1s",
        "interval": 1,
        "minimum": 10,
    }
    with pytest.raises(IntervalTooShort, match="minimum interval on this installation is 120"):
        check_min_interval(parse("*/1 * * * *"), 120)
    check_min_interval(parse("0 * * * *"), 120)


def test_check_min_interval_refuses_a_bad_minimum() -> None:
    with pytest.raises(ValueError):
        check_min_interval(parse("* * * * *"), 0)


# --- properties -------------------------------------------------------------

periods = st.integers(1, MAX_SECONDS)
small_periods = st.one_of(st.integers(1, 130), st.integers(1, 200_000), periods)


@st.composite
def starts(draw: st.DrawFn) -> datetime:
    moment = draw(st.datetimes(datetime(1960, 1, 1), datetime(2100, 1, 1)))
    return moment.replace(tzinfo=UTC)


@settings(max_examples=500, deadline=None)
@given(small_periods)
def test_every_n_seconds_normalizes_as_the_minute_rules(n: int) -> None:
    got = parse(f"every {n} seconds").normalized
    if n % 60 == 0:
        assert got == reference_every(n // 60, "minute")
    else:
        assert got == f"@every {n}s"
    typed = parse(f"@every {n}s").normalized
    assert typed == (reference_interval(n // 60) if n % 60 == 0 else f"@every {n}s")


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 3000), st.sampled_from(["minute", "hour", "day"]))
def test_existing_every_forms_do_not_move(n: int, unit: str) -> None:
    expected = reference_every(n, unit)
    if n * {"minute": 60, "hour": 3600, "day": 86_400}[unit] > MAX_SECONDS:
        with pytest.raises(ScheduleSyntax):
            parse(f"every {n} {unit}s")
        return
    assert parse(f"every {n} {unit}s").normalized == expected
    assert parse(f"every {n} {unit}").normalized == expected
    assert parse(f"@every {n}{unit[0]}").normalized == reference_interval(
        n * {"minute": 1, "hour": 60, "day": 1440}[unit]
    )


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 40),
    st.integers(0, 30),
    st.integers(0, 130),
    st.integers(0, 130),
    st.sampled_from(["", " "]),
)
def test_mixed_units_are_their_sum(
    days: int, hours: int, minutes: int, seconds: int, gap: str
) -> None:
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")]
    written = gap.join(f"{n}{u}" for n, u in parts if n) or "0s"
    total = days * 86_400 + hours * 3600 + minutes * 60 + seconds
    text = f"@every {written}"
    if total == 0:
        with pytest.raises(ScheduleSyntax):
            parse(text)
        return
    assert parse(text).normalized == parse(f"@every {total}s").normalized
    words = " ".join(
        f"{n} {name}"
        for n, name in zip(
            (days, hours, minutes, seconds), ("days", "hours", "minutes", "seconds"), strict=True
        )
        if n
    )
    assert parse(f"every {words}").normalized == parse(f"every {total} seconds").normalized


@settings(max_examples=500, deadline=None)
@given(small_periods, starts(), st.sampled_from(ZONES), st.integers(1, 6))
def test_intervals_fire_at_multiples_of_n_in_every_zone(
    n: int, start: datetime, zone: str, count: int
) -> None:
    cron = parse(f"every {n} seconds")
    if not cron.is_interval:
        return  # a 5-field form: the cron properties cover it
    got = cron.upcoming(start, count, zone)
    assert got == cron.upcoming(start, count, "UTC")  # zone-independent
    if not got:
        return  # past year 9999
    assert got[0] > start
    assert seconds_of(got[0]) - seconds_of(start) <= n
    assert all(t.tzinfo is UTC and t.microsecond == 0 for t in got)
    assert all(int(seconds_of(t)) % n == 0 for t in got)
    assert all((b - a).total_seconds() == n for a, b in pairwise(got))
    assert cron.interval_seconds == n == cron.shortest_gap


@settings(max_examples=300, deadline=None)
@given(small_periods, starts())
def test_the_normal_form_is_the_same_schedule(n: int, start: datetime) -> None:
    cron = parse(f"every {n} seconds")
    again = parse(cron.normalized)
    assert again.normalized == cron.normalized
    assert again.upcoming(start, 3, "Europe/London") == cron.upcoming(start, 3, "Europe/London")
    assert cron.describe()  # never empty
    if cron.is_interval:
        assert cron.describe().startswith("Every ")


@settings(max_examples=300, deadline=None)
@given(small_periods, st.integers(1, 4000))
def test_min_interval_refuses_exactly_the_shorter_periods(n: int, minimum: int) -> None:
    cron = parse(f"@every {n}s")
    if n < minimum:
        with pytest.raises(IntervalTooShort) as caught:
            check_min_interval(cron, minimum)
        assert str(minimum) in caught.value.message
    else:
        assert check_min_interval(cron, minimum) is cron
