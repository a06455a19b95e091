"""A typed wall time read as the service reads it, and named when a clock change touches it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.controls import parse_instant
from cronplane.core.wall_times import read_wall_time, wall_text

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2090, 12, 31)),
    st.sampled_from(ZONES),
)
def test_a_plain_wall_time_comes_back_as_typed_and_a_doubtful_one_is_named(
    wall: datetime, zone: str
) -> None:
    wall = wall.replace(second=0, microsecond=0)
    text = wall.strftime("%Y-%m-%d %H:%M")
    reading = read_wall_time(text, zone)
    assert reading.instant == parse_instant(text, zone, "time")  # what the service stores
    assert (reading.note == "") == (len(instants_showing(wall, zone)) == 1)


def instants_showing(wall: datetime, zone: str) -> set[datetime]:
    """The UTC instants whose clock in `zone` reads `wall`: found by trying each offset
    the zone uses in the days around it (0: a gap skips it, 2: a repeat)."""
    tz = ZoneInfo(zone)
    offsets = set()
    for hours in range(-48, 49, 6):
        offset = (wall.replace(tzinfo=UTC) + timedelta(hours=hours)).astimezone(tz).utcoffset()
        assert offset is not None
        offsets.add(offset)
    candidates = {(wall - offset).replace(tzinfo=UTC) for offset in offsets}
    return {at for at in candidates if at.astimezone(tz).replace(tzinfo=None) == wall}


def test_berlins_spring_gap_and_autumn_repeat() -> None:
    gap = read_wall_time("2027-03-28 02:30", "Europe/Berlin")
    assert gap.instant == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    assert gap.note == "2027-03-28 02:30 does not exist in Europe/Berlin: read as 03:30 CEST"
    repeat = read_wall_time("2027-10-31 02:30", "Europe/Berlin")
    assert repeat.instant == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    assert "happens twice" in repeat.note


def test_an_offset_given_wins_over_the_zone() -> None:
    reading = read_wall_time("2027-01-31T06:00+05:30", "Europe/Berlin")
    assert reading == (datetime(2027, 1, 31, 0, 30, tzinfo=UTC), "")


@pytest.mark.parametrize("text", ["tomorrow", "2027-13-01 00:00", "31/01/2027 6pm", ""])
def test_what_is_not_a_time_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        read_wall_time(text, "UTC")


@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(UTC)
    ),
    st.sampled_from(ZONES),
)
def test_what_an_input_shows_reads_back_as_the_same_instant(instant: datetime, zone: str) -> None:
    """A stored instant shown as its wall time and saved untouched does not move, not
    even in the second pass of a repeated hour."""
    instant = instant.replace(microsecond=0)
    assert read_wall_time(wall_text(instant, zone), zone).instant == instant


def test_the_second_pass_of_a_repeat_keeps_its_offset() -> None:
    first, second = (datetime(2027, 10, 31, h, 30, tzinfo=UTC) for h in (0, 1))
    assert wall_text(first, "Europe/Berlin") == "2027-10-31 02:30"
    assert wall_text(second, "Europe/Berlin") == "2027-10-31 02:30+01:00"
