"""The checks of a schedule's end: its active window (`start_at`, `end_at`) and `max_runs`.

    validate_instant(value, field) -> datetime | None    an ISO 8601 instant (naive allowed)
    resolve_window(values, timezone) -> dict             naive bounds made aware, end >= start

A naive bound is a wall time in the schedule's zone, resolved like a fixed
cron time (`cron_zones.wall_instant`: a skipped wall time is the first instant
after the jump, a repeated one its first pass). Pure; the checks are the
`core.fields` rows of these fields (`max_runs`: its row's bounds).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from cronplane.core.cron_zones import known_zone, wall_instant
from cronplane.errors import InvalidWindow

WINDOW_FIELDS: Final = ("start_at", "end_at")
_MAX_TEXT: Final = 64


def validate_instant(value: object, field: str) -> datetime | None:
    """None, or an ISO 8601 date-time (text or datetime); naive means the schedule's zone."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) > _MAX_TEXT or len(text) < len("2027-01-01T00:00"):
                raise ValueError("not an ISO 8601 date and time")
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidWindow(
                f"{field} {value[:_MAX_TEXT]!r} is not an ISO 8601 instant "
                "(e.g. 2027-01-01T03:00, or with an offset 2027-01-01T03:00+01:00)",
                {"field": field},
            ) from None
        value = parsed
    if not isinstance(value, datetime):
        raise InvalidWindow(f"{field} must be an ISO 8601 instant or null", {"field": field})
    if not 1970 <= value.year <= 9998:
        raise InvalidWindow(f"{field} must be between 1970 and 9998", {"field": field})
    return value


def resolve_window(values: Mapping[str, Any], timezone: str) -> dict[str, Any]:
    """The given bounds as aware UTC (naive ones in `timezone`); InvalidWindow when the
    window ends before it starts. Only the window keys present in `values` are returned."""
    zone = known_zone(timezone)
    resolved = {
        key: None if values[key] is None else wall_instant(values[key], zone)
        for key in WINDOW_FIELDS
        if key in values
    }
    check_window(resolved.get("start_at"), resolved.get("end_at"))
    return resolved


def check_window(start_at: datetime | None, end_at: datetime | None) -> None:
    """InvalidWindow when `end_at` is before `start_at` (both aware)."""
    if start_at is not None and end_at is not None and end_at < start_at:
        raise InvalidWindow(
            f"end_at {end_at.isoformat()} is before start_at {start_at.isoformat()}",
            {"field": "end_at", "start_at": start_at.isoformat(), "end_at": end_at.isoformat()},
        )
