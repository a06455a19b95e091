"""Time-ordered ids: version 7 layout, ordered by their instant, unique."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from cronplane.ids import time_ordered_hexes, time_ordered_id, time_ordered_run

instants = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@given(instants, st.integers(min_value=1, max_value=10**9))
def test_a_later_millisecond_always_sorts_after(now: datetime, later_ms: int) -> None:
    first, second = time_ordered_id(now), time_ordered_id(now + timedelta(milliseconds=later_ms))
    assert first.version == second.version == 7
    assert first.variant == second.variant == uuid.RFC_4122
    assert first.int >> 80 == int(now.timestamp() * 1000)
    assert first < second and first.hex < second.hex  # SQLite stores the hex


NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)


def test_ids_of_one_instant_are_unique() -> None:
    assert len({time_ordered_id(NOW) for _ in range(10_000)}) == 10_000


@given(instants, st.integers(min_value=2, max_value=200))
def test_ids_of_one_instant_ascend_in_the_order_they_were_made(now: datetime, count: int) -> None:
    made = [time_ordered_id(now) for _ in range(count)]
    assert made == sorted(made)
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in made)
    assert {u.int >> 80 for u in made} == {int(now.timestamp() * 1000)}


def test_item_hexes_are_sorted_uuid7_with_the_time_prefix() -> None:
    ids = time_ordered_hexes(NOW, 2_000)
    parsed = [uuid.UUID(hex=value) for value in ids]
    assert ids == sorted(ids) and len(set(ids)) == 2_000
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in parsed)
    assert {value[:12] for value in ids} == {time_ordered_id(NOW).hex[:12]}
    later = time_ordered_hexes(NOW + timedelta(milliseconds=1), 1)[0]
    assert later > ids[-1]


@given(instants, st.integers(min_value=1, max_value=5_000))
def test_a_run_is_consecutive_uuid7_ids_of_the_instant(now: datetime, count: int) -> None:
    run = time_ordered_run(now, count)
    first, last = uuid.UUID(hex=run.hex(0)), uuid.UUID(hex=run.hex(count - 1))
    assert len(run.prefix) == 17 and last.int - first.int == count - 1
    for value in (first, last):
        assert value.version == 7 and value.variant == uuid.RFC_4122
        assert value.int >> 80 == int(now.timestamp() * 1000)
    assert len(run.hex(count - 1)) == 32  # the counter never carries into the prefix
