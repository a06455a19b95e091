"""What a typed time means: a wall time in a named zone read as the instant the
service will use, and a note when the zone's clock change makes it doubtful.

    read_wall_time(text, zone) -> WallTime
    wall_text(instant, zone) -> str           the other way: what to show in the input

The console shows it live beside every time input (pause until, backfill
from/to), so the operator sees the UTC instant before submitting. It reads
the text with `core.controls.parse_instant`, the same rule the service
applies on submit, so what is shown is what is stored. Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple
from zoneinfo import ZoneInfo

from cronplane.core.controls import parse_instant


class WallTime(NamedTuple):
    """The instant a typed time stands for (aware, UTC) and a note ("" when plain)."""

    instant: datetime
    note: str


def read_wall_time(text: str, zone: str) -> WallTime:
    """`text` (ISO 8601; naive: a wall time in `zone`) as its UTC instant. Raises ValueError.

    A naive time a clock change repeats is read as its first pass; one it skips
    is moved forward by the gap (Python's `fold=0` rule, which `parse_instant`
    applies): both are named in the note, since the operator typed neither.
    """
    instant = parse_instant(text, zone, "time")
    naive = datetime.fromisoformat(text.strip())
    if naive.tzinfo is not None:
        return WallTime(instant, "")
    tz = ZoneInfo(zone)
    first = naive.replace(tzinfo=tz)
    second = naive.replace(tzinfo=tz, fold=1)
    wall = naive.strftime("%Y-%m-%d %H:%M")
    if first.utcoffset() != second.utcoffset():
        back = first.astimezone(UTC).astimezone(tz).replace(tzinfo=None)
        if back != naive:
            moved = instant.astimezone(tz).strftime("%H:%M %Z")
            return WallTime(instant, f"{wall} does not exist in {zone}: read as {moved}")
        return WallTime(instant, f"{wall} happens twice in {zone}: the first is used")
    return WallTime(instant, "")


def wall_text(instant: datetime, zone: str) -> str:
    """`instant` as 24-hour ISO wall time in `zone` ("2027-01-31 06:00"), which the
    service reads back in the row's zone; with its offset where the bare wall time
    would read back as another instant (the second pass of a repeated hour), so a
    save that leaves the field alone never moves it."""
    local = instant.astimezone(ZoneInfo(zone))
    text = local.strftime("%Y-%m-%d %H:%M:%S" if local.second else "%Y-%m-%d %H:%M")
    if read_wall_time(text, zone).instant != instant:
        return text + local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]
    return text
