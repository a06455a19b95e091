"""The search: the next instant a compiled expression fires, strictly after another.

`core/occurrences.py` says what a schedule's next run is in product terms
(`next_run`, `first_run`); this module is the evaluator under it.

Hand-written rather than delegated to cronsim or croniter, for two reasons:
speed (the dispatcher computes one next occurrence per fire and the preview
dozens per keystroke; precomputed sorted field values plus bisect jump field by
field instead of stepping datetimes, ~10x cronsim) and the DST rules, which
cronsim gets wrong in zones whose shift is not a whole hour (Lord_Howe), since
it ticks local wall time. cronsim stays in the tests as the oracle.

Time zones follow Debian cron (SPEC §3) unless the schedule's DST policy
(`core.dst.DstPolicy`) says otherwise:

- minute or hour field starts with `*`: every real instant whose local wall
  reading matches fires (both copies of a repeated hour, nothing in a gap);
- otherwise (`fixed_time`): a matching wall time skipped by a forward jump
  fires once at the first instant after the jump (several skipped matches
  collapse into that one; `gap="skip"`: not at all), and one in a repeated
  interval fires once, on the first pass.
- `gap="later"`, for any expression: the first matching wall time skipped by
  a forward jump fires the gap's length later (read with the offset before
  the jump), and the search goes on from that instant, whose wall reading is
  past every other skipped match.
- `repeat` picks the passes of a repeated interval for any expression:
  `first` skips the walls already lived through after a backward jump,
  `second` stops a stretch before the walls its backward jump will repeat.

The search walks the zone's constant-offset stretches (`cron_zones`); inside
one, wall time is UTC plus a constant, so the UTC search applies unchanged.
Pure: the instant to start from is an argument, never read.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final

from cronplane.core.cron_forms import CronExpr, Expression, IntervalExpr
from cronplane.core.cron_once import OnceExpr
from cronplane.core.cron_zones import (
    DAY,
    MAX_TS,
    MIN_TS,
    civil_from_days,
    month_info,
    timeline,
)
from cronplane.core.dst import DEBIAN, DstPolicy

# Every expression that fires at all fires within one 400-year Gregorian
# cycle (the calendar repeats), so a longer search could never succeed.
HORIZON: Final = 401 * 366 * DAY
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND: Final = timedelta(seconds=1)
_MAX_MINUTE: Final = MAX_TS // 60
_UTC_KEYS: Final = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "UCT"})


def next_wall_minute(expr: CronExpr, start: int, limit: int) -> int | None:
    """The first matching wall minute in [start, limit), as minutes since 1970-01-01.

    Wall minutes are naive: they count local calendar minutes as if UTC. Each
    field is found by bisecting its sorted values; a miss carries into the
    next larger field, so the loop turns a handful of times, not per minute.
    """
    months, hours, minutes = expr.months, expr.hours, expr.minutes
    day_no, rest = divmod(start, 1440)
    hour, minute = divmod(rest, 60)
    year, month, day = civil_from_days(day_no)
    while True:
        if month not in months:
            index = bisect_left(months, month)
            if index == len(months):
                year += 1
                month = months[0]
            else:
                month = months[index]
            day, hour, minute = 1, 0, 0
        first, length, weekday = month_info(year, month)
        if first * 1440 >= limit:
            return None
        days = expr.days(length, weekday)
        index = bisect_left(days, day)
        if index == len(days):
            month += 1
            if month == 13:
                year, month = year + 1, 1
            day, hour, minute = 1, 0, 0
            continue
        if days[index] != day:
            day, hour, minute = days[index], 0, 0
        index = bisect_left(hours, hour)
        if index == len(hours):
            day, hour, minute = day + 1, 0, 0
            continue
        if hours[index] != hour:
            hour, minute = hours[index], 0
        index = bisect_left(minutes, minute)
        if index == len(minutes):
            hour, minute = hour + 1, 0
            continue
        found = (first + day - 1) * 1440 + hour * 60 + minutes[index]
        return found if found < limit else None


def ceil_minute(seconds: int) -> int:
    """The first whole minute (since 1970) at or after Unix second `seconds`."""
    return -(-seconds // 60)


def is_utc(zone: tzinfo | None) -> bool:
    """True for the zones that never shift (UTC by any name), which skip the timeline."""
    return zone is None or zone == UTC or getattr(zone, "key", None) in _UTC_KEYS


def next_second(
    expr: Expression, after: int, zone: tzinfo | None = None, dst: DstPolicy = DEBIAN
) -> int | None:
    """The first occurrence strictly after Unix second `after`, as a Unix second.

    None when there is none before the horizon (or the end of datetime's range).
    """
    if isinstance(expr, OnceExpr):
        instant = to_second(expr.instant(zone))
        return instant if instant > after else None
    if isinstance(expr, IntervalExpr):
        period = expr.seconds
        found = (after // period + 1) * period
        return found if found <= MAX_TS else None
    limit = min(after + HORIZON, MAX_TS)
    if is_utc(zone):
        minute = next_wall_minute(expr, after // 60 + 1, limit // 60)
        return None if minute is None else minute * 60
    assert zone is not None
    return _next_in_zone(expr, after, zone, limit, dst)


def _next_in_zone(
    expr: CronExpr, after: int, zone: tzinfo, limit: int, dst: DstPolicy
) -> int | None:
    line = timeline(zone)
    shift = expr.fixed_time and dst.gap == "shift"
    later = dst.gap == "later"
    passes = dst.passes(expr.fixed_time)
    low = after + 1  # candidate instants are >= low
    while low < limit:
        start, end, offset, before, following = line.segment(low)
        wall_low, wall_end = low + offset, end + offset
        if (shift or later) and before < offset and low == start:
            # A forward jump at `start` skipped the wall times [start + before,
            # start + offset). `shift`: a fixed time among them fires once, right now;
            # `later`: the first match fires at its wall time read with the old offset.
            skipped = next_wall_minute(
                expr, ceil_minute(start + before), ceil_minute(start + offset)
            )
            if skipped is not None:
                return start if shift else skipped * 60 - before
        if passes == "first" and before > offset:
            # A backward jump at `start`: wall times below start + before were
            # already lived through (the first pass), which alone fires.
            wall_low = max(wall_low, start + before)
        if passes == "second" and following < offset:
            # A backward jump at `end` repeats the wall times from end + following:
            # only their second pass, in the next stretch, fires.
            wall_end = end + following
        minute = next_wall_minute(expr, ceil_minute(wall_low), ceil_minute(wall_end))
        if minute is not None:
            return minute * 60 - offset
        low = end
    return None


def to_second(instant: datetime) -> int:
    """Whole Unix seconds of an aware datetime (floored, exactly)."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"an aware datetime is required, got naive {instant.isoformat()}")
    seconds = (instant - _EPOCH) // _SECOND
    return min(max(seconds, MIN_TS), MAX_TS)


def from_second(seconds: int) -> datetime:
    """The aware UTC datetime of a Unix second."""
    return _EPOCH + timedelta(seconds=seconds)


def next_after(
    expr: Expression, after: datetime, zone: tzinfo | None = None, dst: DstPolicy = DEBIAN
) -> datetime | None:
    """The first occurrence strictly after `after` (aware), in UTC; None when none exists."""
    found = next_second(expr, to_second(after), zone, dst)
    return None if found is None else from_second(found)


def upcoming(
    expr: Expression,
    after: datetime,
    count: int,
    zone: tzinfo | None = None,
    dst: DstPolicy = DEBIAN,
) -> list[datetime]:
    """Up to `count` occurrences after `after`, strictly increasing, aware UTC."""
    if count < 0:
        raise ValueError("count must not be negative")
    out: list[datetime] = []
    current = to_second(after)
    for _ in range(count):
        found = next_second(expr, current, zone, dst)
        if found is None:
            break
        out.append(from_second(found))
        current = found
    return out
