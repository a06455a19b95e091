"""Properties of the cron contract, checked with Hypothesis.

- the parser raises nothing but ScheduleSyntax, whatever the text;
- normalizing is idempotent and keeps the schedule;
- results strictly increase, the first is strictly after the start, each one
  fires by the rules, and no firing instant lies between two consecutive
  results: the brute-force oracle (cron_oracle.py) scanning every minute of a
  short window finds exactly the engine's results. This is also how H, W and
  the 30-minute Lord_Howe shift are checked, where cronsim cannot help.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from cron_oracle import fires
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.core.cron import parse
from cronplane.errors import ScheduleSyntax

# Each zone with its 2026 DST changes (UTC), to start searches right next to them.
TRANSITIONS: dict[str, list[datetime]] = {
    "UTC": [],
    "Asia/Kathmandu": [],
    "America/New_York": [datetime(2026, 3, 8, 7), datetime(2026, 11, 1, 6)],
    "Europe/London": [datetime(2026, 3, 29, 1), datetime(2026, 10, 25, 1)],
    "Australia/Lord_Howe": [datetime(2026, 4, 4, 15), datetime(2026, 10, 3, 15, 30)],
    "America/St_Johns": [datetime(2026, 3, 8, 5, 30), datetime(2026, 11, 1, 4, 30)],
    "Pacific/Chatham": [datetime(2026, 4, 4, 14), datetime(2026, 9, 26, 14)],
}
ZONES = sorted(TRANSITIONS)

TOKENS = [
    *"0123456789*/,-?LW#H() :@\t",
    " ",
    " ",
    "59",
    "60",
    "31",
    "JAN",
    "mon",
    "FRI",
    "every",
    "minutes",
    "hours",
    "day",
    "seconds",
    "second",
    "weeks",
    "and",
    "at",
    "@every",
    "@daily",
    "m",
    "h",
    "d",
    "s",
    "١",
    "²",
    "\n",
]


@settings(max_examples=600, deadline=None)
@given(st.text(max_size=300), st.none() | st.text(max_size=30))
def test_any_text_raises_only_schedule_syntax(text: str, seed: str | None) -> None:
    with contextlib.suppress(ScheduleSyntax):
        parse(text, seed)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join), st.sampled_from([None, "s"]))
def test_cron_like_text_raises_only_schedule_syntax(text: str, seed: str | None) -> None:
    try:
        cron = parse(text, seed)
    except ScheduleSyntax:
        return
    # Whatever parses has a normal form that parses to itself, without a seed.
    assert parse(cron.normalized).normalized == cron.normalized
    assert cron.describe()  # never raises, never empty


def _value(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@st.composite
def field(draw: st.DrawFn, low: int, high: int) -> str:
    """One field: *, */n, v, v-w, v/n, v-w/n or a list, weighted towards the common."""
    kind = draw(st.sampled_from(["*", "*", "step", "value", "range", "start", "rangestep", "list"]))
    a = draw(_value(low, high))
    b = draw(_value(a, high))
    n = draw(st.integers(1, min(high - low + 1, 7 if high == 7 else 60)))
    return {
        "*": "*",
        "step": f"*/{n}",
        "value": str(a),
        "range": f"{a}-{b}",
        "start": f"{a}/{n}",
        "rangestep": f"{a}-{b}/{n}",
        "list": f"{a},{b}",
    }[kind]


@st.composite
def day_of_month(draw: st.DrawFn) -> str:
    special = draw(st.sampled_from(["", "", "", "L", "LW", "W", "?", "H"]))
    if special == "W":
        return f"{draw(_value(1, 31))}W"
    return special or draw(field(1, 31))


@st.composite
def day_of_week(draw: st.DrawFn) -> str:
    special = draw(st.sampled_from(["", "", "", "L", "#", "name", "?", "H"]))
    if special == "L":
        return f"{draw(_value(0, 7))}L"
    if special == "#":
        return f"{draw(_value(0, 7))}#{draw(_value(1, 5))}"
    if special == "name":
        return draw(st.sampled_from(["MON-FRI", "SAT,SUN", "TUE", "FRI-SUN".replace("SUN", "7")]))
    return special or draw(field(0, 7))


@st.composite
def expressions(draw: st.DrawFn) -> str:
    minute = draw(st.sampled_from(["H", "H/15", ""])) or draw(field(0, 59))
    # Hours around the usual DST changes (00:00-03:00 local) come up often.
    hour = draw(st.sampled_from(["H", "H(1-4)", "1", "2", "0-3", "1,2", "*/2", "", ""]))
    hour = hour or draw(field(0, 23))
    if draw(st.booleans()):
        # Every day: the time-of-day rules (DST above all) get most of the examples.
        return f"{minute} {hour} * * *"
    return " ".join((minute, hour, draw(day_of_month()), draw(field(1, 12)), draw(day_of_week())))


@st.composite
def zoned_starts(draw: st.DrawFn) -> tuple[str, datetime]:
    """A zone and a start, mostly within hours (or days) of one of its DST changes."""
    zone = draw(st.sampled_from(ZONES))
    if TRANSITIONS[zone] and draw(st.integers(0, 2)) > 0:
        near = draw(st.sampled_from(TRANSITIONS[zone])).replace(tzinfo=UTC)
        reach = draw(st.sampled_from([3 * 3600, 3 * 3600, 3 * 86_400]))
        return zone, near + timedelta(seconds=draw(st.integers(-reach, reach)))
    moment = draw(st.datetimes(datetime(2000, 1, 1), datetime(2040, 1, 1)))
    return zone, moment.replace(tzinfo=UTC)


SPECIALS = st.sampled_from(
    [
        "every 7 minutes",
        "every 90 minutes",
        "every 5 hours",
        "every 2 days",
        "every 2 hours",
        "at 02:30",
        "every day at 01:45",
        "@hourly",
        "@weekly",
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(expressions() | SPECIALS, zoned_starts(), st.text(max_size=8))
def test_results_increase_match_and_miss_nothing(
    text: str, zoned: tuple[str, datetime], seed: str
) -> None:
    zone_name, start = zoned
    try:
        cron = parse(text, seed)
    except ScheduleSyntax:
        return  # a random combination that never fires (30 2 in February ...)
    zone = ZoneInfo(zone_name)
    got = cron.upcoming(start, 6, zone)
    assert len(got) == 6
    assert got[0] > start
    assert all(a < b for a, b in pairwise(got))
    assert all(t.tzinfo is UTC and t.second == 0 for t in got)
    # Scan at most two days of minutes, or up to the first result when later.
    until = max(min(got[-1], start + timedelta(days=2)), got[0])
    assert fires(cron.expression, zone, start, until) == [t for t in got if t <= until]


@settings(max_examples=200, deadline=None)
@given(expressions() | SPECIALS, zoned_starts())
def test_normalized_form_is_the_same_schedule(text: str, zoned: tuple[str, datetime]) -> None:
    zone, start = zoned
    try:
        cron = parse(text, "seed")
    except ScheduleSyntax:
        return
    again = parse(cron.normalized)
    assert again.normalized == cron.normalized
    assert again.upcoming(start, 3, zone) == cron.upcoming(start, 3, zone)


@settings(max_examples=200, deadline=None)
@given(expressions(), zoned_starts())
def test_next_after_chains(text: str, zoned: tuple[str, datetime]) -> None:
    zone, start = zoned
    try:
        cron = parse(text, "seed")
    except ScheduleSyntax:
        return
    first = cron.next_after(start, zone)
    assert first is not None
    # Any instant in [start, first) leads to the same next occurrence.
    middle = start + (first - start) / 2
    assert cron.next_after(middle, zone) == first
    assert cron.next_after(first - timedelta(microseconds=1), zone) == first
