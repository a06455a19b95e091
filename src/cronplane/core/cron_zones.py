"""Time zones: the IANA lookup, a zone's offsets as constant stretches, the calendar.

`known_zone` is the one way a zone name becomes a zone (UnknownZone otherwise).
zoneinfo answers "what is the offset at instant t" but does not list its
transitions, and the Debian DST rules need them (a skipped wall time fires at
the first instant after the jump). So a timeline probes the zone every two
days of a calendar year, bisects each change down to the second, and memoizes
the year. Two transitions closer than the probe step that cancel out would be
missed; the closest pair in the tz database since 1970 is 6.9 days apart
(America/Cambridge_Bay, 2000).

Pure: no I/O and no clock. The memo tables are caches of facts about zones.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime, timedelta, tzinfo
from difflib import get_close_matches
from functools import lru_cache
from typing import Final, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronplane.errors import UnknownZone

DAY: Final = 86_400
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_PROBE: Final = 2 * DAY


@lru_cache(maxsize=1)
def _iana_names() -> frozenset[str]:
    # ZoneInfo alone also opens "right/UTC" (leap-second clocks) or "posixrules";
    # "localtime" is whatever the node is set to, so a stored schedule would
    # mean different things on different nodes.
    return frozenset(available_timezones()) - {"localtime", "posixrules"}


@lru_cache(maxsize=1)
def _by_lower_name() -> dict[str, str]:
    return {name.lower(): name for name in _iana_names()}


@lru_cache(maxsize=1)
def _by_lower_place() -> dict[str, list[str]]:
    places: dict[str, list[str]] = {}
    for name in sorted(_iana_names()):
        places.setdefault(name.rsplit("/", 1)[-1].lower(), []).append(name)
    return places


def closest_zones(name: str, limit: int = 3) -> list[str]:
    """The IANA names a mistyped `name` most likely meant, best first (at most `limit`).

    The same name in another case is the one answer (`europe/berlin`); then the
    place alone (`berlin`, `new york`); then difflib's closest spellings.
    """
    wanted = name.strip().lower().replace(" ", "_")[:64]
    if not wanted:
        return []
    exact = _by_lower_name().get(wanted)
    if exact is not None:
        return [exact]
    by_place = _by_lower_place().get(wanted)
    if by_place:
        return by_place[:limit]
    close = get_close_matches(wanted, list(_by_lower_name()), n=limit, cutoff=0.75)
    return [_by_lower_name()[lowered] for lowered in close]


@lru_cache(maxsize=4096)
def known_zone(name: str) -> ZoneInfo:
    """The IANA zone `name` (zoneinfo + tzdata); `UnknownZone` when there is none.

    The error suggests the closest known names (`closest_zones`), in its message
    and in `detail["suggestions"]`.
    """
    if not isinstance(name, str) or name not in _iana_names():
        shown = name[:64] if isinstance(name, str) else repr(name)[:64]
        suggestions = closest_zones(name) if isinstance(name, str) else []
        listed = ", ".join(suggestions[:-1]) + " or " if len(suggestions) > 1 else ""
        hint = (
            f"did you mean {listed}{suggestions[-1]}?"
            if suggestions
            else "not an IANA zone name (e.g. Europe/London)"
        )
        raise UnknownZone(
            f"unknown time zone {shown!r}: {hint}",
            {"timezone": shown, "suggestions": suggestions},
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:  # pragma: no cover
        raise UnknownZone(f"unknown time zone {name!r}", {"timezone": name}) from error


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number since 1970-01-01."""
    days += 719_468
    era = days // 146_097
    doe = days - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


@lru_cache(maxsize=65_536)
def month_info(year: int, month: int) -> tuple[int, int, int]:
    """(day number of the 1st, length in days, weekday of the 1st with 0 = Sunday)."""
    first = days_from_civil(year, month, 1)
    following = days_from_civil(year + (month == 12), month % 12 + 1, 1)
    # 1970-01-01 was a Thursday (4).
    return first, following - first, (first + 4) % 7


# The instants datetime can represent, with a day of margin for offsets.
MIN_TS: Final = days_from_civil(1, 1, 2) * DAY
MAX_TS: Final = days_from_civil(9999, 12, 30) * DAY


class Segment(NamedTuple):
    """A stretch [start, end) of Unix seconds with one UTC offset.

    `before` is the offset just before `start` and `after` the offset from
    `end` on; they equal `offset` where the boundary is only a year boundary.
    """

    start: int
    end: int
    offset: int
    before: int
    after: int


class ZoneTimeline:
    """The offsets of one zone, memoized per calendar year (UTC)."""

    def __init__(self, zone: tzinfo) -> None:
        self._zone = zone
        self._years: dict[int, tuple[list[int], list[int], int, int, int]] = {}
        self._last: Segment | None = None

    def offset(self, ts: int) -> int:
        """The UTC offset in seconds at Unix second `ts`."""
        ts = min(max(ts, MIN_TS), MAX_TS)
        moment = (_EPOCH + timedelta(seconds=ts)).astimezone(self._zone)
        delta = moment.utcoffset()
        return 0 if delta is None else delta // timedelta(seconds=1)

    def _change_after(self, low: int, high: int, low_offset: int) -> int:
        """The first second in (low, high] whose offset differs from `low_offset`."""
        while high - low > 1:
            middle = (low + high) // 2
            if self.offset(middle) == low_offset:
                low = middle
            else:
                high = middle
        return high

    def _year(self, year: int) -> tuple[list[int], list[int], int, int, int]:
        found = self._years.get(year)
        if found is not None:
            return found
        begin = days_from_civil(year, 1, 1) * DAY
        finish = days_from_civil(year + 1, 1, 1) * DAY
        starts, offsets = [begin], [self.offset(begin)]
        probe = begin
        while probe < finish - 1:
            step_to = min(probe + _PROBE, finish - 1)
            current = offsets[-1]
            if self.offset(step_to) != current:
                change = self._change_after(probe, step_to, current)
                starts.append(change)
                offsets.append(self.offset(change))
                probe = change
            else:
                probe = step_to
        found = (starts, offsets, finish, self.offset(begin - 1), self.offset(finish))
        self._years[year] = found
        return found

    def segment(self, ts: int) -> Segment:
        """The constant-offset stretch holding Unix second `ts`."""
        last = self._last
        if last is not None and last.start <= ts < last.end:
            return last
        year = civil_from_days(ts // DAY)[0]
        starts, offsets, finish, before_year, after_year = self._year(year)
        index = bisect_right(starts, ts) - 1
        last_index = len(starts) - 1
        segment = Segment(
            start=starts[index],
            end=starts[index + 1] if index < last_index else finish,
            offset=offsets[index],
            before=offsets[index - 1] if index > 0 else before_year,
            after=offsets[index + 1] if index < last_index else after_year,
        )
        self._last = segment
        return segment


@lru_cache(maxsize=256)
def timeline(zone: tzinfo) -> ZoneTimeline:
    """The shared, memoized timeline of `zone`."""
    return ZoneTimeline(zone)


def wall_instant(wall: datetime, zone: tzinfo | None) -> datetime:
    """The aware UTC instant a naive wall-clock reading stands for in `zone`.

    The product's fixed-time DST rules (SPEC §3), as for `at 02:30`: a wall
    time a forward jump skips is the first real instant after the jump; one
    a backward jump repeats is its first pass. An aware `wall` is returned
    as is (in UTC).
    """
    if wall.tzinfo is not None and wall.utcoffset() is not None:
        return wall.astimezone(UTC)
    if zone is None:
        return wall.replace(tzinfo=UTC)
    # fold=0 is the first pass of a repeated time and, in a gap, the offset
    # from before the jump, which lands after the jump: detect that by the
    # round trip and answer the jump's instant.
    candidate = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if candidate.astimezone(zone).replace(tzinfo=None) == wall:
        return candidate
    seconds = (candidate - _EPOCH) // timedelta(seconds=1)
    start = timeline(zone).segment(seconds).start
    return _EPOCH + timedelta(seconds=start)


# Zone names kept for compatibility (tzdata's `backward` and the POSIX-style rules):
# valid, but rarely what a user means. EST is a fixed UTC-05:00 all year, and CET
# follows the EU's rules in no particular country: a schedule named after a city
# follows that city's clocks. The ones people type, with what they likely meant.
LEGACY_ZONES: Final = {
    "EST": "America/New_York",
    "MST": "America/Denver",
    "HST": "Pacific/Honolulu",
    "EST5EDT": "America/New_York",
    "CST6CDT": "America/Chicago",
    "MST7MDT": "America/Denver",
    "PST8PDT": "America/Los_Angeles",
    "CET": "Europe/Paris",
    "MET": "Europe/Paris",
    "EET": "Europe/Athens",
    "WET": "Europe/Lisbon",
    "US/Eastern": "America/New_York",
    "US/Central": "America/Chicago",
    "US/Mountain": "America/Denver",
    "US/Pacific": "America/Los_Angeles",
    "GB": "Europe/London",
}


def legacy_zone_note(name: str) -> str | None:
    """A warning for a legacy zone name (EST, CET, US/Eastern…), naming the city zone
    it likely stands for; None for a zone named after a place, or UTC."""
    meant = LEGACY_ZONES.get(name)
    if meant is None:
        return None
    fixed = name in ("EST", "MST", "HST")
    what = "a fixed offset with no daylight saving" if fixed else "a legacy zone name"
    return f"{name} is {what}; for that region's clocks use {meant}"
