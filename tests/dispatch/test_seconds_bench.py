"""The seconds benchmark's own arithmetic: percentiles, instants, and the exactly-once check.

bench/seconds_bench.py's figures in docs/performance.md rest on these.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import seconds_bench as bench

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1 .. 100
    assert bench.percentile(values, 0.50) == 50.0
    assert bench.percentile(values, 0.99) == 99.0
    assert bench.percentile(values, 1.0) == 100.0
    assert bench.percentile([7.0, 1.0, 3.0], 0.5) == 3.0  # unsorted input
    assert bench.percentile([5.0], 0.99) == 5.0
    summary = bench.summary([0.001, 0.002, 0.050])
    assert summary == {"p50_ms": 2.0, "p99_ms": 50.0, "max_ms": 50.0, "samples": 3}


@given(st.lists(st.floats(-1e6, 1e6), min_size=1), st.floats(0.01, 1.0))
def test_a_percentile_has_at_least_q_of_the_values_at_or_below_it(
    values: list[float], q: float
) -> None:
    found = bench.percentile(values, q)
    assert found in values
    assert sum(v <= found for v in values) >= q * len(values)
    # ... and it is the smallest such value.
    below = [v for v in values if v < found]
    assert len(below) < q * len(values)


def test_instants_are_anchored_at_the_epoch() -> None:
    assert bench.next_instant(T0.timestamp()) == T0
    assert bench.next_instant(T0.timestamp() + 0.001) == T0 + timedelta(seconds=10)
    assert bench.instants(T0, 3) == [T0 + timedelta(seconds=s) for s in (0, 10, 20)]


def test_missing_and_twice_are_counted_per_schedule_and_instant() -> None:
    window = bench.instants(T0, 3)
    counts = {(s, t): 1 for s in ("a", "b") for t in window}
    assert bench.occurrence_gaps(counts, ["a", "b"], window) == (0, 0)
    del counts[("a", window[1])]
    counts[("b", window[2])] = 2
    counts[("b", T0 + timedelta(seconds=30))] = 1  # after the window: ignored
    counts[("z", window[0])] = 5  # not a schedule of the run: ignored
    assert bench.occurrence_gaps(counts, ["a", "b"], window) == (1, 1)
    assert bench.occurrence_gaps({}, ["a", "b"], window) == (6, 0)


@pytest.mark.parametrize("raw", ["2026-03-02 10:00:00", "2026-03-02 10:00:00.000000", T0])
def test_timestamps_read_from_either_database_compare_equal(raw: object) -> None:
    assert bench.as_utc(raw) == T0
    assert bench.sqlite_text(T0) == "2026-03-02 10:00:00.000000"


def test_the_trend_is_the_instants_slope_in_ms_per_minute() -> None:
    # Six instants a minute; the last item 10 ms later each instant is +60 ms a minute.
    rising = [0.010 * i for i in range(60)]
    assert bench.trend(rising) == pytest.approx(60.0)
    assert bench.trend([0.2] * 60) == pytest.approx(0.0)
    # One slow instant at the end moves the last minute's maximum, hardly the slope;
    # an instant with no item yet counts for nothing.
    flat = [0.2] * 59 + [0.9]
    assert abs(bench.trend(flat)) < 10.0  # against +700 ms in the last minute's maximum
    assert bench.trend([0.1, None, 0.3]) == pytest.approx(0.2 * 1000 / (20 / 60))
