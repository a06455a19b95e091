"""The one-off form (`once at …`), the active window's checks, and a schedule's state."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.cron import parse
from cronplane.core.cron_zones import known_zone, wall_instant
from cronplane.core.fields import FIELD_CHECKS
from cronplane.core.model import STATE_RULES, STATES, Schedule
from cronplane.core.occurrences import first_run, next_run
from cronplane.core.window import resolve_window, validate_instant
from cronplane.errors import CronRejected, InvalidMaxRuns, InvalidWindow, ScheduleSyntax

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("once at 2027-01-01T03:00", "@once 2027-01-01T03:00"),
        ("Once At 2027-01-01 03:00", "@once 2027-01-01T03:00"),
        ("@once 2027-01-01T03:00", "@once 2027-01-01T03:00"),
        ("once at 2027-01-01T03:00+01:00", "@once 2027-01-01T03:00+01:00"),
        ("once at 2027-01-01T03:00-0530", "@once 2027-01-01T03:00-05:30"),
        ("once at 2027-01-01T03:00:30Z", "@once 2027-01-01T03:00:30+00:00"),
        ("  once at 2027-01-01T03:00:00  ", "@once 2027-01-01T03:00"),
    ],
)
def test_normalized_form(text: str, normalized: str) -> None:
    cron = parse(text)
    assert cron.normalized == normalized and cron.is_once
    assert parse(cron.normalized).normalized == normalized  # idempotent


def test_description() -> None:
    assert parse("once at 2027-01-01T03:00").describe() == "Once, at 03:00 on Friday 1 January 2027"
    assert (
        parse("once at 2027-01-01T03:00+01:00").describe()
        == "Once, at 03:00 (UTC+01:00) on Friday 1 January 2027"
    )


def test_fires_once_at_the_instant_in_the_zone() -> None:
    cron = parse("once at 2027-01-01T03:00")
    instant = datetime(2027, 1, 1, 2, 0, tzinfo=UTC)  # Berlin is UTC+1 in winter
    assert cron.next_after(NOW, "Europe/Berlin") == instant
    assert cron.upcoming(NOW, 5, "Europe/Berlin") == [instant]  # preview: one occurrence
    assert cron.next_after(instant - timedelta(seconds=1), "Europe/Berlin") == instant
    assert cron.next_after(instant, "Europe/Berlin") is None  # strictly after
    # An explicit offset ignores the zone.
    fixed = parse("once at 2027-01-01T03:00+05:00")
    assert fixed.next_after(NOW, "America/New_York") == datetime(2026, 12, 31, 22, tzinfo=UTC)


@pytest.mark.parametrize(
    ("wall", "expected"),
    [
        # London springs forward at 01:00 UTC on 2027-03-28: 01:30 does not exist;
        # the first real minute after the jump is 02:00 BST (01:00 UTC).
        ("2027-03-28T01:30", datetime(2027, 3, 28, 1, 0, tzinfo=UTC)),
        # It falls back on 2027-10-31: 01:30 happens twice; the first pass is BST.
        ("2027-10-31T01:30", datetime(2027, 10, 31, 0, 30, tzinfo=UTC)),
        ("2027-07-01T09:15", datetime(2027, 7, 1, 8, 15, tzinfo=UTC)),
    ],
)
def test_dst_rules_for_a_naive_instant(wall: str, expected: datetime) -> None:
    assert parse(f"once at {wall}").next_after(NOW, "Europe/London") == expected
    assert wall_instant(datetime.fromisoformat(wall), known_zone("Europe/London")) == expected


@pytest.mark.parametrize(
    "text",
    [
        "once",
        "once at",
        "once at tomorrow",
        "once at 2027-02-30T03:00",
        "once at 2027-01-01T24:00",
        "once at 2027-01-01T03:60",
        "once at 2027-01-01T03:00+24:00",
        "once at 1969-12-31T23:59",
        "@once 2027-01-01",
        "@once 2027-01-01T03:00 extra",
        "@oncely 2027-01-01T03:00",
    ],
)
def test_invalid_one_offs_raise_the_parsers_error(text: str) -> None:
    with pytest.raises(ScheduleSyntax) as refused:
        parse(text)
    assert refused.value.code.text == "X400003INVSCH" and text.strip() in refused.value.message


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(["once at ", "@once ", "once ", "ONCE AT "]),
    st.text(alphabet="0123456789-:T +Zz.\t", max_size=40),
)
def test_one_off_like_text_raises_only_schedule_syntax(prefix: str, rest: str) -> None:
    with contextlib.suppress(ScheduleSyntax):
        cron = parse(prefix + rest)
        assert parse(cron.normalized).normalized == cron.normalized
        for zone in ("UTC", "Europe/London", "Pacific/Chatham"):
            found = cron.next_after(datetime(1970, 1, 1, tzinfo=UTC), zone)
            assert found is None or found.tzinfo is not None


def test_first_run_refuses_a_past_or_far_one_off() -> None:
    with pytest.raises(CronRejected, match="not in the future"):
        first_run("@once 2026-05-01T00:00", "UTC", NOW)
    with pytest.raises(CronRejected, match="five years"):
        first_run("@once 2032-01-01T00:00", "UTC", NOW)
    assert first_run("@once 2026-06-01T12:01", "UTC", NOW) == NOW + timedelta(minutes=1)


def test_occurrences_respect_the_window() -> None:
    start = NOW + timedelta(hours=1, seconds=30)
    end = NOW + timedelta(hours=3)
    assert next_run("0 * * * *", "UTC", NOW, start_at=start) == NOW + timedelta(hours=2)
    assert next_run("0 * * * *", "UTC", NOW, start_at=NOW + timedelta(hours=1)) == (
        NOW + timedelta(hours=1)  # an occurrence at start_at itself counts
    )
    assert next_run("0 * * * *", "UTC", NOW + timedelta(hours=2), end_at=end) == end
    assert next_run("0 * * * *", "UTC", end, end_at=end) is None
    with pytest.raises(CronRejected, match="between start_at and end_at"):
        first_run("0 0 1 * *", "UTC", NOW, start_at=start, end_at=end)


def test_window_checks() -> None:
    assert validate_instant("2027-01-01T03:00", "start_at") == datetime(2027, 1, 1, 3)
    assert validate_instant(None, "end_at") is None
    for bad in ("soon", "2027-13-01T00:00", 5, "1900-01-01T00:00", "2027-01-01"):
        with pytest.raises(InvalidWindow) as refused:
            validate_instant(bad, "start_at")
        assert refused.value.code.text == "X400150WININV"
    max_runs = FIELD_CHECKS["max_runs"]
    for bad_runs in (0, -1, True, 1.5, "3", 10**10):
        with pytest.raises(InvalidMaxRuns) as too:
            max_runs(bad_runs, "")
        assert too.value.code.text == "X400151RUNINV"
    assert max_runs(3, "") == 3 and max_runs(None, "") is None
    naive = {"start_at": datetime(2027, 1, 1, 3), "end_at": datetime(2027, 1, 1, 3, 0, 0)}
    resolved = resolve_window(naive, "Europe/Berlin")
    assert resolved["start_at"] == datetime(2027, 1, 1, 2, tzinfo=UTC)
    with pytest.raises(InvalidWindow, match="before start_at"):
        resolve_window({**naive, "end_at": datetime(2027, 1, 1, 2, 59)}, "Europe/Berlin")


def _row(**values: object) -> Schedule:
    base = Schedule(
        id=__import__("uuid").uuid4(),
        tenant="t",
        stack="s",
        environment="e",
        name="n",
        job="j",
        cron="* * * * *",
        timezone="UTC",
        payload={},
        enabled=True,
        source="user",
        misfire_grace=None,
        overlap="skip",
        last_run=NOW,
        next_run=NOW,
        created_at=NOW,
        updated_at=NOW,
        revision=1,
        declared=None,
        overrides=(),
    )
    return replace(base, **values)  # type: ignore[arg-type]


def test_state_is_derived_from_the_row() -> None:
    assert _row().state == "active"
    assert _row(enabled=False, next_run=None).state == "inactive"
    assert _row(next_run=None, max_runs=3, run_count=3).state == "ended"
    assert _row(next_run=None, cron="@once 2027-01-01T03:00").state == "done"
    assert _row(enabled=False, next_run=None, cron="@once 2027-01-01T03:00").state == "inactive"
    assert _row(max_runs=5, run_count=2).runs_left == 3 and _row().runs_left is None
    paused = datetime(2026, 1, 1, tzinfo=UTC)
    assert _row(paused_at=paused).state == "paused"
    # Disabled wins over paused, and a paused row with nothing left is ended.
    assert _row(enabled=False, next_run=None, paused_at=paused).state == "inactive"
    assert _row(next_run=None, max_runs=1, run_count=1, paused_at=paused).state == "ended"
    assert {name for name, _ in STATE_RULES} == set(STATES) - {"active"}
