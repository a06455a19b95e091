"""Excluded days (issue 36): the shifted occurrence function against a brute-force model.

The model takes every raw occurrence over a stretch of months, moves each one
on an excluded day to the same wall time on the business day before or after
(walking day by day), and keeps the distinct instants. `Exclusion.shifted`
must give exactly those, asked from any instant, for every policy, in the
zones with odd transitions (London, New York, Lord Howe's half hour,
Santiago's midnight, Apia's skipped day in 2011).
"""

from __future__ import annotations

import bisect
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.calendars import Calendar, calendar_from
from cronplane.core.cron_zones import wall_instant
from cronplane.core.excluded import Exclusion
from cronplane.core.occurrences import next_run_function
from cronplane.errors import InvalidName, InvalidRequest, UnknownHolidays

ZONES = {
    "Europe/London": 2027,
    "America/New_York": 2027,
    "Australia/Lord_Howe": 2027,
    "America/Santiago": 2027,
    "Pacific/Apia": 2011,
    "UTC": 2027,
}
CRONS = (
    "0 18 L * *",
    "30 2 * * *",
    "0 */6 * * *",
    "0 9 * * 1-5",
    "0 0 1 * *",
    "15 1-3 * * *",
    "0 12 * * 6",
    "0 0 * * *",
    "45 23 * * 0,3",
)
SPAN = timedelta(days=150)
EDGE = timedelta(days=40)


def model(raw: list[datetime], calendars: tuple[Calendar, ...], policy: str, zone: ZoneInfo):
    """The instants that run: each raw occurrence, moved day by day off excluded days."""

    def excluded(day: date) -> bool:
        return any(c.why(day) is not None for c in calendars)

    step = timedelta(days=-1 if policy == "previous" else 1)
    out = set()
    for occurrence in raw:
        local = occurrence.astimezone(zone)
        day = local.date()
        if not excluded(day):
            out.add(occurrence)
            continue
        while excluded(day):
            day += step
        wall = datetime.combine(day, local.replace(tzinfo=None, fold=0).time())
        out.add(wall_instant(wall, zone))
    return sorted(out)


def raw_between(cron: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    next_after = next_run_function(cron, zone)
    found, at = [], next_after(start)
    while at is not None and at <= end:
        found.append(at)
        at = next_after(at)
    return found


@st.composite
def cases(draw):
    zone_name = draw(st.sampled_from(sorted(ZONES)))
    year = ZONES[zone_name]
    start = datetime(year, 1, 1, tzinfo=UTC) + timedelta(days=draw(st.integers(0, 200)))
    weekly = draw(
        st.one_of(st.just(frozenset({5, 6})), st.frozensets(st.integers(0, 6), max_size=3))
    )
    window_days = [start.date() + timedelta(days=n) for n in range(SPAN.days)]
    dates = draw(st.frozensets(st.sampled_from(window_days), max_size=25))
    holidays = draw(st.sampled_from((None, "GB-ENG", "US", "DE-BY", "NZ")))
    calendars = (Calendar("a", weekly, dates), Calendar("b", holidays=holidays))
    return (
        zone_name,
        start,
        draw(st.sampled_from(CRONS)),
        calendars,
        draw(st.sampled_from(("previous", "next"))),
        draw(st.lists(st.integers(0, (SPAN - 2 * EDGE) // timedelta(minutes=1)), max_size=8)),
    )


@settings(max_examples=200, deadline=None)
@given(cases())
def test_shifted_occurrences_are_the_models(case):
    zone_name, start, cron, calendars, policy, probes = case

    zone = ZoneInfo(zone_name)
    end = start + SPAN
    expected = model(raw_between(cron, zone_name, start, end), calendars, policy, zone)
    exclusion = Exclusion(calendars, policy, zone)
    shifted = exclusion.shifted(next_run_function(cron, zone_name))
    low, high = start + EDGE, end - EDGE
    inside = [t for t in expected if low < t <= high]
    walked, at = [], shifted(low)
    while at is not None and at <= high:
        walked.append(at)
        at = shifted(at)
    assert walked == inside
    # Asked from any instant, not only from one that runs: from each raw
    # occurrence (which may land later or earlier than itself) and its second
    # before, and from random instants.
    raw = raw_between(cron, zone_name, low, high)
    probed = [
        moved
        for o in raw
        for moved in (o - timedelta(seconds=1), o, o + timedelta(days=1), o + timedelta(days=2))
    ]
    probed += [low + timedelta(minutes=minutes) for minutes in probes]
    for after in probed:
        want = expected[bisect.bisect_right(expected, after)]
        assert shifted(after) == want, after


def test_last_business_day_of_december_2027_in_england():
    """`0 18 L * *` + weekends + England's bank holidays + previous: worked out by hand.

    December 2027: the 31st is a Friday, a business day, so it runs then. The
    25th (Sat) and 26th (Sun) are the weekend; Christmas and Boxing Day are
    observed Monday 27th and Tuesday 28th. January 2028's last day, Monday the
    31st, is a business day. April 2027: the 30th is a Friday. July 2027: the
    31st is a Saturday, so Friday 30th. October 2027: the 31st is a Sunday, so
    Friday 29th.
    """
    calendars = (
        calendar_from("weekends", weekly=["sat", "sun"]),
        calendar_from("uk-bank-holidays", holidays="gb-eng"),
    )
    zone = ZoneInfo("Europe/London")
    shifted = Exclusion(calendars, "previous", zone).shifted(
        next_run_function("0 18 L * *", "Europe/London")
    )
    runs, at = [], datetime(2027, 3, 31, 23, tzinfo=UTC)
    for _ in range(10):
        at = shifted(at)
        runs.append(at.astimezone(zone).strftime("%Y-%m-%d %H:%M"))
    assert runs == [
        "2027-04-30 18:00",
        "2027-05-28 18:00",  # Monday 31 May: Spring Bank Holiday
        "2027-06-30 18:00",
        "2027-07-30 18:00",
        "2027-08-31 18:00",
        "2027-09-30 18:00",
        "2027-10-29 18:00",
        "2027-11-30 18:00",
        "2027-12-31 18:00",
        "2028-01-31 18:00",
    ]


def test_holidays_of_2027_worked_out_by_hand():
    """Easter 2027 is 28 March; US Thanksgiving the fourth Thursday of November;
    Bavaria keeps Epiphany, Corpus Christi (Easter + 60 days) and All Saints."""
    england = calendar_from("uk", holidays="GB-ENG")
    us = calendar_from("us", holidays="US")
    bavaria = calendar_from("by", holidays="DE-BY")
    assert england.why(date(2027, 3, 26)) == "Good Friday (GB-ENG)"
    assert england.why(date(2027, 3, 29)) == "Easter Monday (GB-ENG)"
    assert england.why(date(2027, 12, 27)) is not None  # Christmas on a Saturday: observed
    assert england.why(date(2027, 12, 24)) is None
    assert us.why(date(2027, 11, 25)) == "Thanksgiving Day (US)"
    assert us.why(date(2027, 7, 5)) is not None  # the 4th is a Sunday: observed Monday
    assert us.why(date(2027, 3, 29)) is None
    assert bavaria.why(date(2027, 1, 6)) == "Epiphany (DE-BY)"
    assert bavaria.why(date(2027, 5, 27)) == "Corpus Christi (DE-BY)"
    assert bavaria.why(date(2027, 11, 1)) == "All Saints' Day (DE-BY)"
    assert calendar_from("x", holidays="DE-BE").why(date(2027, 5, 27)) is None


def test_next_business_day_moves_a_weekend_run_to_monday_once():
    """Saturday's and Sunday's 09:00 both land on Monday 09:00, which runs once."""
    weekends = calendar_from("weekends", weekly=["sat", "sun"])
    zone = ZoneInfo("America/New_York")
    exclusion = Exclusion((weekends,), "next", zone)
    raw = next_run_function("0 9 * * *", "America/New_York")
    shifted = exclusion.shifted(raw)
    friday = datetime(2027, 3, 5, 14, tzinfo=UTC)  # Friday 09:00 EST
    monday = shifted(friday)
    assert monday.astimezone(zone).strftime("%a %H:%M") == "Mon 09:00"
    assert shifted(monday).astimezone(zone).strftime("%a %H:%M") == "Tue 09:00"
    sources = [o.astimezone(zone).strftime("%a") for o in exclusion.origins(monday, raw)]
    assert sources == ["Sat", "Sun"]


def test_a_calendar_without_business_days_nearby_is_a_calculation_error():
    days = [date(2027, 1, 1) + timedelta(days=n) for n in range(60)]
    closed = Calendar("closed", dates=frozenset(days))
    shifted = Exclusion((closed,), "next", ZoneInfo("UTC")).shifted(
        next_run_function("0 9 * * *", "UTC")
    )
    with pytest.raises(ValueError, match="no business day within 31 days"):
        shifted(datetime(2027, 1, 2, tzinfo=UTC))


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ({"weekly": ["sat", "funday"]}, "weekly"),
        ({"weekly": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}, "weekly"),
        ({"dates": ["2027-02-30"]}, "dates"),
        ({"holidays": "XX"}, "holidays"),
        ({"holidays": "GB-ZZZ"}, "holidays"),
    ],
)
def test_bad_calendar_parts_are_refused_with_the_field_named(parts, field):
    with pytest.raises((InvalidRequest, UnknownHolidays)) as caught:
        calendar_from("cal", **parts)
    assert caught.value.detail["field"] == field


def test_a_bad_calendar_name_is_refused():
    with pytest.raises(InvalidName):
        calendar_from("no spaces")
