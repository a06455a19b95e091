"""Notes for people: which coming occurrences a DST transition touches, and what the
schedule's policy makes of them.

    dst_notes(cron, zone_name, after, dst) -> list[str]

For every transition of the zone in the year after `after`, a note when a
wall time the expression matches falls in its gap or its repeated interval,
e.g. "02:30 does not exist on 2027-03-28 in Europe/London; this schedule runs
at 03:00 that day (dst gap: shift)". One note per transition (the first such
wall time named). `cron explain`, the API's preview and the console's editor
show them. Pure: the instant is an argument.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from cronplane.core.cron import Cron, known_zone, start_instant
from cronplane.core.cron_forms import CronExpr
from cronplane.core.cron_search import ceil_minute, is_utc, next_wall_minute, to_second
from cronplane.core.cron_zones import timeline
from cronplane.core.dst import DstPolicy

YEAR: Final = 366 * 86_400
_EPOCH: Final = datetime(1970, 1, 1)
PASSES: Final = {"first": "the first pass", "second": "the second pass", "both": "both passes"}


def _wall(minute: int) -> datetime:
    return _EPOCH + timedelta(minutes=minute)


def dst_rule(cron: Cron, dst: DstPolicy) -> str:
    """The DST rule the expression runs under, in a line (`cron explain`)."""
    if cron.is_interval:
        return "exact interval from the Unix epoch (zone-independent)"
    repeated = PASSES[dst.passes(cron.fixed_time)]
    if dst.gap == "later":
        return (
            "a skipped time fires the gap's length later (the rest of the gap does not), "
            f"a repeated one on {repeated}"
        )
    if cron.fixed_time:
        skipped = "fires after the jump" if dst.gap == "shift" else "does not fire that day"
        return f"fixed time: a skipped time {skipped}, a repeated one on {repeated}"
    return f"every matching wall minute: none in a gap, a repeated one on {repeated}"


def dst_notes(cron: Cron, zone_name: str, after: datetime, dst: DstPolicy) -> list[str]:
    """The notes for the transitions of the next year after `after` (see the module)."""
    zone = known_zone(zone_name)
    expr = cron.expression
    if not isinstance(expr, CronExpr) or is_utc(zone):
        return []  # an interval or a one-off is no wall time; UTC never shifts
    line = timeline(zone)
    low = to_second(start_instant(after, zone))
    limit = low + YEAR
    notes = []
    while low < limit:
        segment = line.segment(low)
        if segment.end >= limit:
            break
        at, before, offset = segment.end, segment.offset, segment.after
        if offset > before:
            note = _gap_note(expr, zone_name, at, before, offset, dst)
        elif offset < before:
            note = _repeat_note(expr, zone_name, at, before, offset, dst)
        else:
            note = None
        if note is not None:
            notes.append(note)
        low = segment.end
    return notes


def _gap_note(
    expr: CronExpr, zone: str, at: int, before: int, offset: int, dst: DstPolicy
) -> str | None:
    """The walls [at + before, at + offset) do not exist."""
    found = next_wall_minute(expr, ceil_minute(at + before), ceil_minute(at + offset))
    if found is None:
        return None
    wall = _wall(found)
    head = f"{wall:%H:%M} does not exist on {wall:%Y-%m-%d} in {zone}"
    if dst.gap == "later":
        moved = _wall((found * 60 - before + offset) // 60)
        day = "that day" if moved.date() == wall.date() else f"on {moved:%Y-%m-%d}"
        return f"{head}; this schedule runs at {moved:%H:%M} {day} (dst gap: later)"
    if not expr.fixed_time:
        return f"{head}; a wildcard or stepped minute or hour keeps its cadence: nothing runs in the gap"
    if dst.gap == "skip":
        return f"{head}; this schedule does not run then that day (dst gap: skip)"
    jump = _wall((at + offset) // 60)
    day = "that day" if jump.date() == wall.date() else f"on {jump:%Y-%m-%d}"
    return f"{head}; this schedule runs at {jump:%H:%M} {day} (dst gap: shift)"


def _repeat_note(
    expr: CronExpr, zone: str, at: int, before: int, offset: int, dst: DstPolicy
) -> str | None:
    """The walls [at + offset, at + before) happen twice."""
    found = next_wall_minute(expr, ceil_minute(at + offset), ceil_minute(at + before))
    if found is None:
        return None
    wall = _wall(found)
    passes = dst.passes(expr.fixed_time)
    policy = dst.repeat or "default"
    first = datetime.fromtimestamp(found * 60 - before, UTC).astimezone(known_zone(zone))
    second = datetime.fromtimestamp(found * 60 - offset, UTC).astimezone(known_zone(zone))
    return (
        f"{wall:%H:%M} happens twice on {wall:%Y-%m-%d} in {zone} "
        f"({first.tzname()}, then {second.tzname()}); this schedule runs on "
        f"{PASSES[passes]} (dst repeat: {policy})"
    )
