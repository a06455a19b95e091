"""The *when* of a Temporal schedule (its spec) as cronplane cron declarations.

Part of :mod:`cronplane.importers.temporal`: calendars and cron strings (the server
keeps both as ``structuredCalendar``) become 5-field crons in the spec's zone;
intervals, counted from the epoch by both, become ``every N …`` or — with a phase,
when the interval divides a day — the crons of the same times of day. What cron
cannot say (seconds, years, exclusions, day of month AND day of week) raises
Untranslatable with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from cronplane.core import cron as cron_engine
from cronplane.core.cron_zones import known_zone
from cronplane.errors import ScheduleSyntax, UnknownZone
from cronplane.importers.celery_beat import interval_expression
from cronplane.importers.translation import Untranslatable, duration_seconds

DAY: Final = 86400

# (JSON key, cron position, full range) of a structured calendar's fields.
FIELDS: Final = (
    ("minute", 0, (0, 59)),
    ("hour", 1, (0, 23)),
    ("dayOfMonth", 2, (1, 31)),
    ("month", 3, (1, 12)),
    ("dayOfWeek", 4, (0, 6)),
)
# What a CalendarSpec (the text form) leaves out means: seconds, minutes, hours 0; days all.
CALENDAR_DEFAULTS: Final = {
    "second": "0",
    "minute": "0",
    "hour": "0",
    "dayOfMonth": "*",
    "month": "*",
    "dayOfWeek": "*",
}


def spec_declarations(spec: Mapping[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    """The cron declarations (cron, timezone, window, jitter) of a schedule spec; notes
    on what changes meaning are appended to `notes`."""
    for key in ("excludeStructuredCalendar", "excludeCalendar"):
        if spec.get(key):
            raise Untranslatable(f"spec.{key}: cronplane has no exclusions")
    zone = str(spec.get("timezoneName") or "UTC")
    try:
        known_zone(zone)
    except UnknownZone as error:
        raise Untranslatable(f"timezoneName {zone!r} is not a known zone") from error
    window: dict[str, Any] = {}
    for key, field in (("startTime", "start_at"), ("endTime", "end_at")):
        if spec.get(key):
            window[field] = _instant(spec[key], f"spec.{key}", up=field == "start_at").isoformat()
    jitter = duration(spec.get("jitter") or "0s", "spec.jitter")
    if jitter >= 1:
        window["jitter"] = round(jitter)
        notes.append(
            f"jitter {round(jitter)} s: cronplane delays every fire of a schedule by one "
            "stable offset within it, Temporal draws one per action"
        )
    elif jitter > 0:
        notes.append(f"jitter {jitter:g} s under a second: not carried over")
    declarations: list[dict[str, Any]] = []
    wall_clock = [_structured(c) for c in as_list(spec.get("structuredCalendar"))]
    wall_clock += [_calendar(c) for c in as_list(spec.get("calendar"))]
    wall_clock += [_cron_string(c) for c in as_list(spec.get("cronString"))]
    for cron in wall_clock:
        declared: dict[str, Any] = {"cron": cron}
        if zone != "UTC":
            declared["timezone"] = zone
        declarations.append({**declared, **window})
    if wall_clock and _has_dst(zone):
        notes.append(
            f"{zone} changes its clocks, and Temporal reads them its own way: it skips a wall "
            "time the spring jump skips (cronplane fires it at the first minute after) and "
            "starts a fixed time twice in the repeated autumn hour (cronplane once, on the "
            "first pass)"
        )
    for interval in as_list(spec.get("interval")):
        # Intervals are elapsed time from the epoch: UTC, whatever timezoneName says.
        declarations += [{"cron": cron, **window} for cron in _interval(interval)]
    if not declarations:
        raise Untranslatable("the spec has no calendar, cron string or interval")
    return declarations


def _has_dst(zone: str) -> bool:
    """Whether `zone` has two offsets in a year (2027, as good as any recent one)."""
    tz = known_zone(zone)
    offsets = {datetime(2027, month, 1, tzinfo=tz).utcoffset() for month in (1, 4, 7, 10)}
    return len(offsets) > 1


def _structured(calendar: Any) -> str:
    """A 5-field cron of a structuredCalendar (the server's form of cron strings too)."""
    calendar = as_mapping(calendar, "structuredCalendar")
    if calendar.get("year"):
        raise Untranslatable(
            f"the calendar restricts years ({_text(calendar['year'])}): cron has none"
        )
    seconds = _ranges(calendar.get("second"), "second", (0, 59))
    if seconds != "0":
        raise Untranslatable(
            f"the calendar fires at seconds {seconds}: cronplane's crons fire at :00 "
            "(use `every N seconds` if it is a fixed spacing)"
        )
    fields = ["*"] * 5
    for key, position, full in FIELDS:
        fields[position] = _ranges(calendar.get(key), key, full)
    return _cron(fields)


def _calendar(calendar: Any) -> str:
    """A 5-field cron of a CalendarSpec in its text form (`{"hour": "9,17", …}`)."""
    calendar = as_mapping(calendar, "calendar")
    values = {key: str(calendar.get(key) or default) for key, default in CALENDAR_DEFAULTS.items()}
    if calendar.get("year") not in (None, "", "*"):
        raise Untranslatable(f"the calendar restricts years ({calendar['year']}): cron has none")
    if values["second"] != "0":
        raise Untranslatable(f"the calendar fires at seconds {values['second']}: crons fire at :00")
    return _cron([values[key] for key, _, _ in FIELDS])


def _cron_string(text: Any) -> str:
    if not isinstance(text, str) or len(text.split()) != 5:
        raise Untranslatable(f"cron string {text!r} is not 5 fields")
    return _cron(text.split())


def _cron(fields: list[str]) -> str:
    """The cron of 5 fields, refused where Temporal's meaning and cron's differ."""
    if fields[2] != "*" and fields[4] != "*":
        raise Untranslatable(
            f"the calendar restricts day of month ({fields[2]}) and day of week ({fields[4]}): "
            "Temporal requires both to match, cron fires when either does"
        )
    text = " ".join(fields)
    try:
        cron_engine.parse(text, seed="temporal")
    except ScheduleSyntax as error:
        raise Untranslatable(
            f"calendar {text!r} is not a cron cronplane reads: {error.message}"
        ) from error
    return text


def _ranges(value: Any, what: str, full: tuple[int, int]) -> str:
    """A cron field from a list of Temporal ranges ({start, end, step}; end < start: start)."""
    if not value:
        raise Untranslatable(f"the calendar's {what} matches nothing")
    parts = []
    for item in as_list(value):
        item = as_mapping(item, what)
        start = whole(item.get("start") or 0, what)
        end = max(whole(item.get("end") or 0, what), start)
        step = whole(item.get("step") or 1, what)
        if (start, end) == full and step == 1:
            return "*"
        if start == end:
            parts.append(str(start))
        elif step == 1:
            parts.append(f"{start}-{end}")
        else:
            parts.append(f"{'*' if (start, end) == full else f'{start}-{end}'}/{step}")
    return ",".join(parts)


def _interval(interval: Any) -> list[str]:
    """The crons of `epoch + n·interval + phase`: one exact interval, or (a phase, and an
    interval that divides a day) the crons of the same times of day."""
    interval = as_mapping(interval, "interval")
    every = duration(interval.get("interval") or "0s", "interval")
    phase = duration(interval.get("phase") or "0s", "phase")
    if not 0 < every < 10 * 366 * DAY or every != int(every) or phase != int(phase):
        raise Untranslatable(
            f"interval {every:g} s, phase {phase:g} s: only whole seconds translate"
        )
    every_s, phase_s = int(every), int(phase) % int(every)
    if phase_s == 0:
        return [interval_expression(every_s)]
    if DAY % every_s or every_s % 60 or phase_s % 60:
        raise Untranslatable(
            f"interval {every_s} s with phase {phase_s} s: cronplane's exact intervals are "
            "anchored at the epoch with no phase, and these instants are no set of crons"
        )
    hours_by_minute: dict[int, set[int]] = {}
    for instant in range(phase_s, DAY, every_s):
        hours_by_minute.setdefault(instant // 60 % 60, set()).add(instant // 3600)
    minutes_by_hours: dict[tuple[int, ...], list[int]] = {}
    for minute, hour_set in sorted(hours_by_minute.items()):
        minutes_by_hours.setdefault(tuple(sorted(hour_set)), []).append(minute)
    crons = []
    for hours, minutes in minutes_by_hours.items():
        hour_field = "*" if len(hours) == 24 else ",".join(map(str, hours))
        crons.append(f"{','.join(map(str, minutes))} {hour_field} * * *")
    return crons


def duration(value: Any, what: str) -> float:
    """Seconds of a protobuf JSON duration (`"300s"`, `"0.5s"`) or a Go one (`"5m"`)."""
    seconds = duration_seconds(str(value))
    if seconds is None or seconds < 0:
        raise Untranslatable(f"{what} {value!r} is not a duration")
    return seconds


def _instant(value: Any, what: str, *, up: bool = False) -> datetime:
    """An aware instant of RFC 3339 text, to the second (rounded up when `up`): protobuf
    times may carry nanoseconds, cronplane's grain is one second."""
    text = str(value).replace("Z", "+00:00").replace("z", "+00:00")
    whole, dot, rest = text.partition(".")
    fraction = ""
    if dot:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        fraction, text = rest[:digits], whole + rest[digits:]
    try:
        instant = datetime.fromisoformat(text)
    except ValueError as error:
        raise Untranslatable(f"{what} {value!r} is not an instant") from error
    if instant.tzinfo is None:
        raise Untranslatable(f"{what} {value!r} has no offset")
    if up and fraction.strip("0"):
        instant += timedelta(seconds=1)
    return instant


def as_list(value: Any) -> list[Any]:
    """A JSON list as itself, null as empty, anything else as a list of one."""
    return value if isinstance(value, list) else [] if value is None else [value]


def as_mapping(value: Any, what: str) -> Mapping[str, Any]:
    """`value` when it is a JSON object; Untranslatable naming `what` otherwise."""
    if not isinstance(value, Mapping):
        raise Untranslatable(f"{what} is not an object")
    return value


def whole(value: Any, what: str) -> int:
    """A whole number of protobuf JSON (int64s come as text); Untranslatable otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Untranslatable(f"{what} {value!r:.40} is not a whole number")
    try:
        return int(value)
    except ValueError as error:
        raise Untranslatable(f"{what} {value!r:.40} is not a whole number") from error


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))[:80]
