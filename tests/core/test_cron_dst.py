"""Daylight-saving transitions, numbered (cronsim style), for both Debian rules.

Rule A: the minute or hour field starts with `*` -> every real minute whose
wall reading matches (both copies of a repeated hour, nothing in a gap).
Rule B: fixed time -> a skipped match fires once at the first instant after
the jump; a repeated one fires once, on the first pass.

Transitions used (2026):
- America/New_York: Mar 8 02:00 EST -> 03:00 EDT (07:00Z); Nov 1 02:00 EDT -> 01:00 EST (06:00Z)
- Europe/London:    Mar 29 01:00 GMT -> 02:00 BST (01:00Z); Oct 25 02:00 BST -> 01:00 GMT (01:00Z)
- Australia/Lord_Howe (30-minute shift): Apr 5 02:00 +11 -> 01:30 +10:30 (Apr 4 15:00Z);
  Oct 4 02:00 +10:30 -> 02:30 +11 (Oct 3 15:30Z)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from cron_oracle import fires

from cronplane.core.cron import parse

NY, LON, LHI = "America/New_York", "Europe/London", "Australia/Lord_Howe"

# (number, expression, zone, after (UTC), the next occurrences (UTC))
CASES = [
    # --- America/New_York, spring forward: 02:00-02:59 does not exist on Mar 8
    (1, "30 2 * * *", NY, "2026-03-07T12:00", ["03-08T07:00", "03-09T06:30"]),  # B: at 03:00 EDT
    (2, "0,30 2 * * *", NY, "2026-03-07T12:00", ["03-08T07:00", "03-09T06:00", "03-09T06:30"]),
    (3, "*/30 2 * * *", NY, "2026-03-07T12:00", ["03-09T06:00", "03-09T06:30"]),  # A: none
    (4, "30 * * * *", NY, "2026-03-08T06:00", ["03-08T06:30", "03-08T07:30", "03-08T08:30"]),
    (5, "0 3 * * *", NY, "2026-03-07T12:00", ["03-08T07:00", "03-09T07:00"]),  # 03:00 exists
    (6, "0 2,3 * * *", NY, "2026-03-07T12:00", ["03-08T07:00", "03-09T06:00"]),  # collapse
    (7, "59 1 * * *", NY, "2026-03-08T00:00", ["03-08T06:59", "03-09T05:59"]),
    # --- America/New_York, fall back: 01:00-01:59 happens twice on Nov 1
    (8, "30 1 * * *", NY, "2026-11-01T00:00", ["11-01T05:30", "11-02T06:30"]),  # B: first pass
    (9, "30 1 * * *", NY, "2026-11-01T06:10", ["11-02T06:30"]),  # after in 2nd pass: done
    (10, "30 * * * *", NY, "2026-11-01T05:00", ["11-01T05:30", "11-01T06:30", "11-01T07:30"]),
    (
        11,
        "*/20 1 * * *",
        NY,
        "2026-11-01T04:00",
        [f"11-01T0{h}:{m}" for h in (5, 6) for m in ("00", "20", "40")],
    ),
    (12, "0 1-2 * * *", NY, "2026-11-01T04:00", ["11-01T05:00", "11-01T07:00", "11-02T06:00"]),
    (13, "0 1 * * 0", NY, "2026-10-31T00:00", ["11-01T05:00", "11-08T06:00"]),  # weekly, once
    # --- Europe/London
    (14, "30 1 * * *", LON, "2026-03-28T12:00", ["03-29T01:00", "03-30T00:30"]),  # B: 02:00 BST
    (15, "30 1 * * *", LON, "2026-03-29T01:00", ["03-30T00:30"]),  # the jump instant is not after
    (16, "*/30 1 * * *", LON, "2026-03-29T00:00", ["03-30T00:00", "03-30T00:30"]),  # A: none
    (17, "0 1 * * *", LON, "2026-10-24T12:00", ["10-25T00:00", "10-26T01:00"]),  # B: once
    (18, "15 * * * *", LON, "2026-10-24T23:30", ["10-25T00:15", "10-25T01:15", "10-25T02:15"]),
    (19, "0 * 25 10 *", LON, "2026-10-24T23:30", ["10-25T00:00", "10-25T01:00", "10-25T02:00"]),
    # --- Australia/Lord_Howe: 30-minute shifts, where cronsim drifts and the rules win
    (20, "15 2 * * *", LHI, "2026-10-03T12:00", ["10-03T15:30", "10-04T15:15"]),  # B: 02:30 +11
    (21, "0,15 2 * * *", LHI, "2026-10-03T12:00", ["10-03T15:30", "10-04T15:00", "10-04T15:15"]),
    (22, "30 2 * * *", LHI, "2026-10-03T12:00", ["10-03T15:30", "10-04T15:30"]),  # not twice
    (23, "*/15 2 * * *", LHI, "2026-10-03T12:00", ["10-03T15:30", "10-03T15:45", "10-04T15:00"]),
    (24, "45 1 * * *", LHI, "2026-04-04T12:00", ["04-04T14:45", "04-05T15:15"]),  # B: first pass
    (25, "45 * * * *", LHI, "2026-04-04T14:00", ["04-04T14:45", "04-04T15:15", "04-04T16:15"]),
    (
        26,
        "*/10 1 * * *",
        LHI,
        "2026-04-04T14:25",
        ["04-04T14:30", "04-04T14:40", "04-04T14:50", "04-04T15:00", "04-04T15:10"],
    ),
    (27, "50 1 * * *", LHI, "2026-04-04T14:55", ["04-05T15:20"]),  # 2nd pass 01:50 is not fired
    (28, "0 2 * * *", LHI, "2026-04-04T12:00", ["04-04T15:30", "04-05T15:30"]),  # after the repeat
    # --- the jump instant itself: a skipped fixed time fires at it, never twice
    (29, "15 2 * * *", LHI, "2026-10-03T15:29:59", ["10-03T15:30", "10-04T15:15"]),
    (30, "15 2 * * *", LHI, "2026-10-03T15:30", ["10-04T15:15"]),
    (31, "30 2 * * *", NY, "2026-03-08T06:59:59.999999", ["03-08T07:00", "03-09T06:30"]),
    (32, "0 3 * * *", NY, "2026-03-08T06:59", ["03-08T07:00", "03-09T07:00"]),  # same instant
]


def _utc(text: str, year: int = 2026) -> datetime:
    if len(text) == 11:  # "MM-DDTHH:MM"
        text = f"{year}-{text}"
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("number", "expression", "zone", "after", "expected"), CASES, ids=[str(c[0]) for c in CASES]
)
def test_dst_table(
    number: int, expression: str, zone: str, after: str, expected: list[str]
) -> None:
    start = _utc(after)
    got = parse(expression).upcoming(start, len(expected), zone)
    assert got == [_utc(e) for e in expected], f"case {number}"


@pytest.mark.parametrize(
    ("number", "expression", "zone", "after", "expected"), CASES, ids=[str(c[0]) for c in CASES]
)
def test_dst_table_agrees_with_the_brute_force_oracle(
    number: int, expression: str, zone: str, after: str, expected: list[str]
) -> None:
    start = _utc(after)
    until = _utc(expected[-1])
    assert fires(parse(expression).expression, ZoneInfo(zone), start, until) == [
        _utc(e) for e in expected
    ], f"case {number}"


def test_a_year_of_hourly_fires_every_real_hour_once() -> None:
    # Rule A in a zone: "0 * * * *" fires at every real hour, 8760 in 2026, none lost or doubled.
    start = datetime(2026, 1, 1, tzinfo=UTC) - timedelta(seconds=1)
    got = parse("0 * * * *").upcoming(start, 8760, NY)
    assert got[0] == datetime(2026, 1, 1, tzinfo=UTC)
    assert all(b - a == timedelta(hours=1) for a, b in pairwise(got))


def test_a_fixed_daily_time_fires_once_every_local_day() -> None:
    for zone in (NY, LON, LHI):
        for text in ("30 2 * * *", "30 1 * * *", "0 2 * * *"):
            got = parse(text).upcoming(datetime(2025, 12, 31, tzinfo=UTC), 366, zone)
            days = [t.astimezone(ZoneInfo(zone)).date() for t in got]
            assert len(set(days)) == 366, (zone, text)
