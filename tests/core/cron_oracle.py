"""A brute-force reference for the cron rules, written to be obviously right, not fast.

It walks real (UTC) minutes one by one, reads each one's local wall clock from
zoneinfo and applies SPEC §3 literally:

- rule A (minute or hour field starts with `*`): a minute fires when its wall
  reading matches;
- rule B (fixed time): a minute fires when its wall reading matches and it is
  the first pass of that wall time (zoneinfo's fold=0), or when the wall clock
  jumped forward into it over a matching wall minute.

A DST policy (`core.dst.DstPolicy`) replaces the rules' choices, read just as
literally: `gap="skip"` drops the jump's fire, `gap="later"` fires the first
matching skipped wall minute where zoneinfo reads it (fold=0: the offset before
the jump) and nothing before that instant, `repeat` names the passes (fold=0
first, fold=1 second) a repeated wall minute fires on.

Day matching re-implements L, W, # and Vixie's OR with the `calendar` module,
independently of the engine's precomputed day tables. Days whose wall dates
cannot match are skipped whole, so sparse schedules stay cheap. Assumes zones
whose offsets are whole minutes (every zone since 1970 but a few early ones).
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta, tzinfo

from cronplane.core.cron_forms import CronExpr, Expression, IntervalExpr
from cronplane.core.dst import DEBIAN, DstPolicy

MINUTE = timedelta(minutes=1)


def _nearest_weekday(year: int, month: int, day: int) -> int:
    length = calendar.monthrange(year, month)[1]
    weekday = calendar.weekday(year, month, day)  # Monday = 0
    if weekday == 5:
        return day - 1 if day > 1 else day + 2
    if weekday == 6:
        return day + 1 if day < length else day - 2
    return day


def day_matches(expr: CronExpr, year: int, month: int, day: int) -> bool:
    """Whether a calendar date matches the day-of-month/day-of-week/month fields."""
    if month not in expr.months:
        return False
    length = calendar.monthrange(year, month)[1]
    cron_weekday = (calendar.weekday(year, month, day) + 1) % 7  # Sunday = 0
    dom, dow = expr.dom, expr.dow
    by_dom = (
        day in dom.values
        or (dom.last and day == length)
        or (dom.last_weekday and day == _nearest_weekday(year, month, length))
        or any(n <= length and _nearest_weekday(year, month, n) == day for n in dom.nearest_weekday)
    )
    nth = (day - 1) // 7 + 1
    by_dow = (
        cron_weekday in dow.values
        or (cron_weekday in dow.last_of and day > length - 7)
        or (cron_weekday, nth) in dow.nth
    )
    return (by_dom or by_dow) if expr.day_or else (by_dom and by_dow)


def wall_matches(expr: CronExpr, wall: datetime) -> bool:
    """Whether a naive local wall time matches every field."""
    return (
        wall.minute in expr.minutes
        and wall.hour in expr.hours
        and day_matches(expr, wall.year, wall.month, wall.day)
    )


def _wall(instant: datetime, zone: tzinfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def _on_pass(wall: datetime, instant: datetime, zone: tzinfo, passes: str) -> bool:
    if passes == "both":
        return True
    fold = 0 if passes == "first" else 1
    return wall.replace(tzinfo=zone, fold=fold).astimezone(UTC) == instant


def fires(
    expr: Expression, zone: tzinfo, after: datetime, until: datetime, dst: DstPolicy = DEBIAN
) -> list[datetime]:
    """Every occurrence in (after, until], aware UTC, by scanning minutes."""
    if isinstance(expr, IntervalExpr):
        period = expr.seconds
        first = (int(after.timestamp()) // period + 1) * period
        out, current = [], first
        while current <= until.timestamp():
            out.append(datetime.fromtimestamp(current, UTC))
            current += period
        return out
    fixed = expr.fixed_time
    shift = fixed and dst.gap == "shift"
    passes = dst.passes(fixed)
    instant = after.astimezone(UTC).replace(second=0, microsecond=0) + MINUTE
    previous_wall = _wall(instant - MINUTE, zone)
    out = []
    held: datetime | None = None  # gap="later": the moved fire, nothing before it
    while instant <= until:
        if held is None and instant.hour == 0 and instant.minute == 0:
            day_end = instant + timedelta(days=1) - MINUTE
            first_date = previous_wall.date()
            last_date = _wall(day_end, zone).date()
            dates = [
                first_date + timedelta(days=k) for k in range((last_date - first_date).days + 1)
            ]
            if not any(day_matches(expr, d.year, d.month, d.day) for d in dates):
                instant = day_end + MINUTE
                previous_wall = _wall(day_end, zone)
                continue
        wall = _wall(instant, zone)
        jumped_over_match = False
        if shift:
            skipped = previous_wall + MINUTE
            while skipped < wall:
                jumped_over_match |= wall_matches(expr, skipped)
                skipped += MINUTE
        if dst.gap == "later" and wall > previous_wall + MINUTE:
            skipped = previous_wall + MINUTE
            while skipped < wall and not wall_matches(expr, skipped):
                skipped += MINUTE
            if skipped < wall:
                held = skipped.replace(tzinfo=zone, fold=0).astimezone(UTC)
        fire = jumped_over_match or (
            wall_matches(expr, wall) and _on_pass(wall, instant, zone, passes)
        )
        if held is not None:
            fire = instant == held
            if fire:
                held = None
        if fire:
            out.append(instant)
        previous_wall = wall
        instant += MINUTE
    return out
