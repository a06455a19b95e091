"""The one-off form: a schedule that fires once, at one instant.

    once at 2027-01-01T03:00          -> @once 2027-01-01T03:00         (the row's zone)
    once at 2027-01-01 03:00+01:00    -> @once 2027-01-01T03:00+01:00   (an explicit offset)
    @once 2027-01-01T03:00:30Z        -> @once 2027-01-01T03:00:30+00:00

Seconds are optional (kept only when not zero); `Z` is `+00:00`. A naive
instant is a wall time in the schedule's zone, resolved by the fixed-time DST
rules (`cron_zones.wall_instant`): a skipped wall time is the first real
instant after the jump, a repeated one its first pass. Whether the instant is
in the past is not the parser's business (a create refuses it, see
`occurrences.first_run`): the stored form must parse for ever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Final

from cronplane.core.cron_fields import reject
from cronplane.core.cron_zones import wall_instant

_ONCE: Final = re.compile(
    r"(?:once[ \t]+at|@once)[ \t]+([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T|t|[ \t]+)"
    r"([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?[ \t]*(Z|z|[+-][0-9]{2}:?[0-9]{2})?",
    re.ASCII | re.IGNORECASE,
)
# Not strftime's %A/%B: those follow the process's locale.
_WEEKDAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS: Final = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_EXAMPLE: Final = "'once at 2027-01-01T03:00' or 'once at 2027-01-01T03:00+01:00'"


@dataclass(frozen=True, slots=True)
class OnceExpr:
    """One instant: a naive wall time (in the schedule's zone) or one with a fixed offset."""

    normalized: str
    wall: datetime  # naive
    offset: int | None  # seconds east of UTC; None: the schedule's zone

    def instant(self, zone: tzinfo | None) -> datetime:
        """The aware UTC instant it fires at, evaluated in `zone` when it has no offset."""
        if self.offset is not None:
            fixed = timezone(timedelta(seconds=self.offset))
            return self.wall.replace(tzinfo=fixed).astimezone(UTC)
        return wall_instant(self.wall, zone)


def is_once(stripped: str) -> bool:
    """True when the text asks for the one-off form (right or wrong)."""
    lowered = stripped.lower()
    return lowered.startswith("@once") or re.match(r"once\b", lowered, re.ASCII) is not None


def _offset(text: str, token: str | None) -> int | None:
    if token is None:
        return None
    if token in ("Z", "z"):
        return 0
    sign = -1 if token[0] == "-" else 1
    digits = token[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 23 or minutes > 59:
        reject(text, "offset", f"{token} is not a UTC offset (at most ±23:59)")
    return sign * (hours * 3600 + minutes * 60)


def _format_offset(seconds: int) -> str:
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def compile_once(text: str, stripped: str) -> OnceExpr:
    """The one-off form's compiled value; ScheduleSyntax (the parser's one error) otherwise."""
    match = _ONCE.fullmatch(stripped)
    if match is None:
        reject(text, "instant", f"expected a date and time, e.g. {_EXAMPLE}")
    year, month, day, hour, minute = (int(match[i]) for i in range(1, 6))
    second = int(match[6]) if match[6] is not None else 0
    try:
        wall = datetime(year, month, day, hour, minute, second)
    except ValueError as error:
        written = f"{match[1]}-{match[2]}-{match[3]}T{match[4]}:{match[5]}"
        reject(text, "instant", f"{written} is not a date and time: {error}")
    if not 1970 <= year <= 9998:
        reject(text, "instant", "the year must be between 1970 and 9998")
    offset = _offset(text, match[7])
    shown = wall.strftime("%Y-%m-%dT%H:%M" if second == 0 else "%Y-%m-%dT%H:%M:%S")
    if offset is not None:
        shown += _format_offset(offset)
    return OnceExpr(f"@once {shown}", wall, offset)


def describe_once(expr: OnceExpr) -> str:
    """ "Once, at 03:00 on Friday 1 January 2027" (with the offset when it has one)."""
    wall = expr.wall
    clock = wall.strftime("%H:%M" if wall.second == 0 else "%H:%M:%S")
    if expr.offset is not None:
        clock += f" (UTC{_format_offset(expr.offset)})"
    weekday = _WEEKDAYS[wall.weekday()]
    return f"Once, at {clock} on {weekday} {wall.day} {_MONTHS[wall.month - 1]} {wall.year}"
