"""The lead before an instant (core.lead): bounded, growing with the burst, off when off."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.lead import (
    ASSUMED_ROW_SECONDS,
    MAX_LEAD,
    PACE_MIN_ROWS,
    PACE_WINDOW,
    BurstPace,
    fire_lead,
    rows_that_fill,
)

margins = st.floats(min_value=0, max_value=0.999)
rows = st.integers(min_value=0, max_value=10_000_000)
paces = st.floats(min_value=0, max_value=1.0)


@given(margin=margins, due=rows, more=rows, pace=paces)
def test_the_lead_is_the_margin_plus_the_burst_within_its_bounds(
    margin: float, due: int, more: int, pace: float
) -> None:
    lead = fire_lead(margin, due, pace)
    if margin == 0:
        assert lead == 0  # firing ahead off: never early, however slow the bursts
        return
    assert margin <= lead <= max(margin, MAX_LEAD)
    assert lead <= margin + due * pace + 1e-12
    # More rows due never make the lead shorter.
    assert fire_lead(margin, due + more, pace) >= lead


@given(margin=st.floats(min_value=0.001, max_value=MAX_LEAD - 0.001), pace=st.floats(1e-7, 1.0))
def test_counting_stops_where_the_lead_reaches_its_cap(margin: float, pace: float) -> None:
    enough = rows_that_fill(margin, pace)
    assert enough is not None
    assert fire_lead(margin, enough, pace) == MAX_LEAD
    assert fire_lead(margin, 10 * enough, pace) == MAX_LEAD


def test_no_count_when_the_lead_cannot_grow() -> None:
    assert rows_that_fill(0.0, 0.001) is None  # off
    assert rows_that_fill(0.9, 0.001) is None  # the margin is already past the cap
    assert rows_that_fill(0.25, 0.0) is None  # bursts that take no time


def test_the_pace_is_the_slowest_recent_timed_burst() -> None:
    pace = BurstPace()
    assert pace.row_seconds == ASSUMED_ROW_SECONDS
    pace.record(PACE_MIN_ROWS - 1, 10.0)  # too small to time: its fixed cost would count
    assert pace.row_seconds == ASSUMED_ROW_SECONDS
    pace.record(1_000, 0.5)
    pace.record(1_000, 0.1)
    assert pace.row_seconds == pytest.approx(0.0005)
    for _ in range(PACE_WINDOW):
        pace.record(10_000, 0.2)  # the slow one has left the window
    assert pace.row_seconds == pytest.approx(0.00002)
