"""The pure firing decision (core.firing): order of rules, coalescing, next_run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core import firing
from cronplane.core.firing import NO_PREVIOUS, DueRow, Outcome, Previous, decide
from firing_support import occurrences

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
MINUTE = occurrences("* * * * *", "UTC")
RUNNING = Previous(running=True)
QUEUED = Previous(queued=True)
BOTH = Previous(queued=True, running=True)


def run(row: DueRow, now: datetime, **kw: object) -> firing.Decision:
    args: dict[str, object] = {"next_after": MINUTE, "job_active": True, "previous": NO_PREVIOUS}
    args.update(kw)
    return decide(row, now=now, **args)  # type: ignore[arg-type]


def test_on_time_fire_sets_next_run_after_now() -> None:
    d = run(DueRow(T0, None, "skip"), T0 + timedelta(seconds=0.2))
    assert d.outcome is Outcome.FIRE
    assert d.scheduled_for == T0
    assert d.coalesced == 1 and d.coalesced_exact
    assert d.next_run == T0 + timedelta(minutes=1)


def test_missed_occurrences_coalesce_into_the_latest() -> None:
    now = T0 + timedelta(minutes=5, seconds=30)
    d = run(DueRow(T0, None, "skip"), now)
    assert d.outcome is Outcome.FIRE
    assert d.scheduled_for == T0 + timedelta(minutes=5)
    assert d.coalesced == 6
    assert d.next_run == T0 + timedelta(minutes=6)


def test_occurrence_exactly_now_is_due() -> None:
    d = run(DueRow(T0, None, "skip"), T0 + timedelta(minutes=1))
    assert d.scheduled_for == T0 + timedelta(minutes=1)
    assert d.next_run == T0 + timedelta(minutes=2)


def test_long_outage_is_bounded_and_marked_as_lower_bound() -> None:
    now = T0 + timedelta(days=400, seconds=7)
    d = run(DueRow(T0, None, "skip"), now)
    assert d.outcome is Outcome.FIRE
    assert d.scheduled_for == now - timedelta(seconds=7)
    assert d.next_run == d.scheduled_for + timedelta(minutes=1)
    assert d.coalesced > firing.MAX_COUNTED and not d.coalesced_exact


@pytest.mark.parametrize(
    ("kw", "grace", "overlap", "outcome"),
    [
        ({"job_active": False}, None, "skip", Outcome.JOB_MISSING),
        ({"job_active": False, "previous": RUNNING}, 1, "skip", Outcome.JOB_MISSING),
        ({"previous": RUNNING}, None, "skip", Outcome.SKIPPED_OVERLAP),
        ({"previous": RUNNING}, None, "allow", Outcome.FIRE),
        ({}, 5, "skip", Outcome.SKIPPED_MISFIRE),
        ({"previous": RUNNING}, 5, "skip", Outcome.SKIPPED_MISFIRE),
        ({}, 30, "skip", Outcome.FIRE),
    ],
)
def test_rule_order(
    kw: dict[str, object], grace: int | None, overlap: str, outcome: Outcome
) -> None:
    # 10 s after the occurrence: within a 30 s grace, past a 5 s one.
    d = run(DueRow(T0, grace, overlap), T0 + timedelta(seconds=10), **kw)
    assert d.outcome is outcome
    assert d.next_run == T0 + timedelta(minutes=1)  # every outcome but CALC_FAILED advances


def test_misfire_grace_judges_the_latest_occurrence() -> None:
    # Down for an hour, but the latest occurrence is 2 s old: fire.
    d = run(DueRow(T0, 5, "skip"), T0 + timedelta(hours=1, seconds=2))
    assert d.outcome is Outcome.FIRE and d.coalesced == 61


def test_unparsable_cron_fails_the_calculation() -> None:
    def broken(after: datetime) -> datetime | None:
        raise ValueError("bad field")

    d = run(DueRow(T0, None, "skip"), T0, next_after=broken)
    assert d.outcome is Outcome.CALC_FAILED and d.disables and d.next_run is None
    assert "bad field" in (d.error or "")


def test_no_further_occurrence_ends_the_row_after_a_normal_decision() -> None:
    d = run(DueRow(T0, None, "skip"), T0, next_after=lambda after: None)
    assert d.outcome is Outcome.FIRE and d.next_run is None
    assert d.ends and d.ended == "no_occurrence" and not d.disables


def test_backwards_occurrence_function_is_refused() -> None:
    d = run(DueRow(T0, None, "skip"), T0, next_after=lambda after: after)
    assert d.outcome is Outcome.CALC_FAILED


def test_not_due_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        run(DueRow(T0, None, "skip"), T0 - timedelta(seconds=1))


@given(
    step=st.sampled_from([1, 7, 60, 300, 3600]),
    late=st.floats(min_value=0, max_value=5 * 86_400, allow_nan=False),
    first_offset=st.integers(min_value=0, max_value=1000),
)
def test_decision_window_invariants(step: int, late: float, first_offset: int) -> None:
    """scheduled_for is an occurrence in [next_run, now]; next_run is the first one after now."""
    every = occurrences(f"@every {step}s", "UTC")
    first = every(T0 + timedelta(seconds=first_offset * step) - timedelta(microseconds=1))
    assert first is not None
    now = first + timedelta(seconds=late)
    d = decide(
        DueRow(first, None, "allow"),
        now=now,
        next_after=every,
        job_active=True,
        previous=NO_PREVIOUS,
    )
    assert first <= d.scheduled_for <= now
    assert d.next_run is not None and d.next_run > now
    assert every(d.scheduled_for) == d.next_run
    if d.coalesced_exact:
        assert d.coalesced == int((d.scheduled_for - first).total_seconds()) // step + 1


@pytest.mark.parametrize(
    ("overlap", "previous", "outcome", "cancels"),
    [
        ("buffer_one", NO_PREVIOUS, Outcome.FIRE, False),
        # Only a running item: the new one waits behind it.
        ("buffer_one", RUNNING, Outcome.FIRE, False),
        # One already waits: later occurrences are skipped.
        ("buffer_one", QUEUED, Outcome.SKIPPED_OVERLAP, False),
        ("buffer_one", BOTH, Outcome.SKIPPED_OVERLAP, False),
        ("cancel_running", NO_PREVIOUS, Outcome.FIRE, False),
        ("cancel_running", RUNNING, Outcome.FIRE, True),
        ("cancel_running", QUEUED, Outcome.FIRE, True),
        ("cancel_running", BOTH, Outcome.FIRE, True),
        ("skip", QUEUED, Outcome.SKIPPED_OVERLAP, False),
        ("skip", RUNNING, Outcome.SKIPPED_OVERLAP, False),
        ("allow", BOTH, Outcome.FIRE, False),
    ],
)
def test_overlap_policies(
    overlap: str, previous: Previous, outcome: Outcome, cancels: bool
) -> None:
    d = run(DueRow(T0, None, overlap), T0, previous=previous)
    assert (d.outcome, d.cancels) == (outcome, cancels)
    assert d.enqueues == (outcome is Outcome.FIRE)


def test_misfire_wins_over_cancel_running() -> None:
    # A late occurrence is skipped before the overlap rule asks anything to stop.
    d = run(DueRow(T0, 5, "cancel_running"), T0 + timedelta(seconds=10), previous=RUNNING)
    assert (d.outcome, d.cancels) == (Outcome.SKIPPED_MISFIRE, False)
