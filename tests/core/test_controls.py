"""The pure rules of jitter, pause and backfill (core/controls.py, core/firing.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.controls import (
    backfill_occurrences,
    check_pause_missed,
    jitter_offset,
    missed_range,
)
from cronplane.core.firing import NO_PREVIOUS, DueRow, Outcome, decide
from cronplane.core.occurrences import next_run_function
from cronplane.errors import InvalidRequest, InvalidUntil

T0 = datetime(2026, 1, 5, tzinfo=UTC)
EVERY_TEN = next_run_function("*/10 * * * *", "UTC")


@given(st.uuids(), st.integers(1, 86_400))
def test_the_offset_is_in_the_window_and_stable(schedule_id: UUID, jitter: int) -> None:
    offset = jitter_offset(schedule_id, jitter)
    assert 0 <= offset < jitter
    # The same on every call and every node: a hash of the id's bytes, not hash().
    assert jitter_offset(UUID(str(schedule_id)), jitter) == offset


def test_no_jitter_is_no_offset() -> None:
    assert jitter_offset(UUID(int=7), None) == 0 == jitter_offset(UUID(int=7), 0)


@given(
    offset=st.integers(0, 599),
    late=st.integers(0, 3_600),
    grace=st.one_of(st.none(), st.integers(0, 120)),
)
def test_a_jittered_decision_stays_on_nominal_instants(
    offset: int, late: int, grace: int | None
) -> None:
    """scheduled_for is a nominal occurrence, next_run keeps the offset, and misfire is
    judged from the fire instant (nominal + offset)."""
    due = T0 + timedelta(seconds=offset)
    now = due + timedelta(seconds=late)
    decision = decide(
        DueRow(due, grace, "allow", jitter_offset=offset),
        now=now,
        next_after=EVERY_TEN,
        job_active=True,
        previous=NO_PREVIOUS,
    )
    nominal = decision.scheduled_for
    assert nominal.minute % 10 == 0 and nominal.second == 0
    assert nominal + timedelta(seconds=offset) <= now < nominal + timedelta(seconds=offset + 600)
    assert decision.next_run == nominal + timedelta(seconds=600 + offset)
    missed = grace is not None and (now - decision.fire_at).total_seconds() > grace
    assert decision.outcome is (Outcome.SKIPPED_MISFIRE if missed else Outcome.FIRE)


@given(
    until=st.one_of(st.none(), st.integers(0, 7_200)),
    late=st.integers(0, 7_200),
)
def test_a_paused_row_is_held_until_an_occurrence_at_or_after_until(
    until: int | None, late: int
) -> None:
    now = T0 + timedelta(seconds=late)
    paused_until = None if until is None else T0 + timedelta(seconds=until)
    decision = decide(
        DueRow(T0, None, "allow", paused_at=T0, paused_until=paused_until),
        now=now,
        next_after=EVERY_TEN,
        job_active=True,
        previous=NO_PREVIOUS,
    )
    held = paused_until is None or decision.scheduled_for < paused_until
    assert decision.outcome is (Outcome.SKIPPED_PAUSED if held else Outcome.FIRE)
    assert decision.resumes is not held


@given(st.integers(0, 2_000), st.integers(1, 2_000))
def test_backfill_occurrences_are_exactly_those_in_the_range(start: int, length: int) -> None:
    first = T0 + timedelta(minutes=start)
    last = first + timedelta(minutes=length)
    found = backfill_occurrences(EVERY_TEN, first, last, cap=10_000)
    expected = [
        T0 + timedelta(minutes=m)
        for m in range(0, 5_000, 10)
        if first <= T0 + timedelta(minutes=m) < last
    ]
    assert found == expected


@given(
    until=st.one_of(st.none(), st.integers(0, 7_200)),
    late=st.integers(0, 7_200),
    policy=st.sampled_from([None, "skip", "once", "all"]),
)
def test_the_decision_that_ends_a_pause_carries_a_policy_that_enqueues(
    until: int | None, late: int, policy: str | None
) -> None:
    paused_until = None if until is None else T0 + timedelta(seconds=until)
    row = DueRow(T0, None, "allow", paused_at=T0, paused_until=paused_until, paused_missed=policy)
    decision = decide(
        row, now=T0 + timedelta(seconds=late), next_after=EVERY_TEN, job_active=True,
        previous=NO_PREVIOUS,
    )  # fmt: skip
    enqueues = decision.resumes and policy in ("once", "all")
    assert decision.missed == (policy if enqueues else None)
    if decision.resumes and paused_until is not None:
        # As of the occurrence that ends it: never past until, which that occurrence is at or after.
        first, last = missed_range(T0, paused_until, decision.scheduled_for)
        assert (first, last) == (T0, paused_until) and last <= decision.scheduled_for


def test_a_resume_range_runs_to_now_inclusive_and_a_policy_needs_until() -> None:
    now = T0 + timedelta(hours=1)
    assert missed_range(T0, None, now) == (T0, now + timedelta(microseconds=1))
    assert missed_range(T0, now + timedelta(hours=1), now) == (T0, now + timedelta(microseconds=1))
    assert check_pause_missed(None, None) is None
    assert check_pause_missed("all", now) == "all"
    with pytest.raises(InvalidUntil):
        check_pause_missed("skip", None)
    with pytest.raises(InvalidRequest):
        check_pause_missed("most", now)
