"""Business calendars: the days a schedule does not run on, and what an occurrence
on such a day does instead (docs/cron.md, "Business calendars").

    Calendar(name, weekly={5, 6}, dates={...}, holidays="GB-ENG")
    calendar.why(day) -> str | None          why the day is excluded, None: a business day

A calendar excludes a day by a weekly rule (Saturday and Sunday), by an
explicit date, or by a public holiday of a country or subdivision, taken
from the `holidays` package (its data ships with it: no network). Hand
coding holiday rules (Easter, observed days) is what that package exists for.

Pure values; `core.excluded` applies a schedule's calendars to its occurrences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any, Final

import holidays as holiday_data

from cronplane.core.validation import validate_name
from cronplane.errors import InvalidRequest, UnknownHolidays

WEEKDAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY_NAMES: Final = (
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
)
ON_EXCLUDED: Final = ("skip", "previous", "next")
ON_EXCLUDED_NOTES: Final = {
    "skip": "an occurrence on an excluded day does not run (the ledger says which calendar)",
    "previous": "it runs once, at the same time on the business day before",
    "next": "it runs once, at the same time on the business day after",
}
MAX_DATES: Final = 1_000


@dataclass(frozen=True, slots=True)
class Calendar:
    """One named calendar: the weekdays (0 Monday .. 6 Sunday), dates and holidays it excludes."""

    name: str
    weekly: frozenset[int] = frozenset()
    dates: frozenset[date] = frozenset()
    holidays: str | None = None  # "GB-ENG", "US", "DE-BY": country[-subdivision]

    def why(self, day: date) -> str | None:
        """Why this calendar excludes `day` ("Saturday", "Christmas Day (GB-ENG)", "listed
        date"), or None when it does not."""
        if day in self.dates:
            return "listed date"
        if day.weekday() in self.weekly:
            return _WEEKDAY_NAMES[day.weekday()]
        if self.holidays is not None:
            name = holiday_names(self.holidays, day.year).get(day)
            if name is not None:
                return f"{name} ({self.holidays})"
        return None

    def to_document(self) -> dict[str, Any]:
        """The calendar as the API and the CLI show it."""
        return {
            "name": self.name,
            "weekly": [WEEKDAYS[d] for d in sorted(self.weekly)],
            "dates": [d.isoformat() for d in sorted(self.dates)],
            "holidays": self.holidays,
        }


@lru_cache(maxsize=1024)
def holiday_names(region: str, year: int) -> Mapping[date, str]:
    """The public holidays of `region` (country[-subdivision]) in `year`: date → name."""
    country, _, subdivision = region.partition("-")
    found = holiday_data.country_holidays(country, subdiv=subdivision or None, years=year)
    return {day: str(name) for day, name in found.items()}


def calendar_from(
    name: str,
    weekly: Iterable[str] = (),
    dates: Iterable[str] = (),
    holidays: str | None = None,
) -> Calendar:
    """A checked calendar from its parts as a user writes them, or InvalidRequest naming
    the bad part (`field`: name, weekly, dates or holidays)."""
    validate_name(name, "calendar")
    days: set[int] = set()
    for text in weekly:
        day = str(text).strip().lower()[:3]
        if day not in WEEKDAYS:
            raise InvalidRequest(
                f"weekday {text!r} is invalid: one of {', '.join(WEEKDAYS)}", {"field": "weekly"}
            )
        days.add(WEEKDAYS.index(day))
    if len(days) == 7:
        raise InvalidRequest("a calendar cannot exclude every weekday", {"field": "weekly"})
    listed: set[date] = set()
    for text in dates:
        try:
            listed.add(date.fromisoformat(str(text).strip()))
        except ValueError:
            raise InvalidRequest(
                f"date {str(text)[:40]!r} is invalid: YYYY-MM-DD", {"field": "dates"}
            ) from None
    if len(listed) > MAX_DATES:
        raise InvalidRequest(f"{len(listed)} dates: at most {MAX_DATES}", {"field": "dates"})
    region = _region(holidays)
    return Calendar(name, frozenset(days), frozenset(listed), region)


def _region(text: str | None) -> str | None:
    """A holidays region the `holidays` package knows, upper-cased, or InvalidRequest."""
    if text is None or not str(text).strip():
        return None
    region = str(text).strip().upper()
    country, _, subdivision = region.partition("-")
    try:
        holiday_data.country_holidays(country, subdiv=subdivision or None, years=2000)
    except (NotImplementedError, KeyError, ValueError):
        raise UnknownHolidays(
            f"holidays {str(text)[:40]!r} are unknown: a country code (US) or a country and "
            "subdivision (GB-ENG, DE-BY) the holidays package knows",
            {"field": "holidays"},
        ) from None
    return region


MAX_EXCLUDED: Final = 8


def validate_exclude(value: object) -> list[str]:
    """A schedule's `exclude`: distinct calendar names, at most MAX_EXCLUDED, or InvalidRequest
    (whether each calendar exists is the service's to check)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest("exclude must be a list of calendar names", {"field": "exclude"})
    if len(value) > MAX_EXCLUDED:
        raise InvalidRequest(
            f"{len(value)} calendars excluded: at most {MAX_EXCLUDED}", {"field": "exclude"}
        )
    names: list[str] = []
    for name in value:
        validate_name(name, "exclude")
        if name not in names:
            names.append(name)
    return names
