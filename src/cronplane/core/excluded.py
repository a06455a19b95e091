"""A schedule's excluded days applied to its occurrences (docs/cron.md, "Business calendars").

    Exclusion(calendars, "skip" | "previous" | "next", zone)
    exclusion.excluded(instant) -> (calendar, why) | None   skip: the decision asks this
    exclusion.shifted(raw) -> NextAfter                      previous/next: the occurrences that run

An occurrence whose local date (in the schedule's zone) a calendar excludes:

- `skip`: is due as usual and decided as skipped (`core.firing`), so the
  ledger names the calendar: never silently;
- `previous` / `next`: runs once, at the same wall time on the business day
  before / after (`wall_instant`'s rules where that time does not exist or
  repeats). Several occurrences that land on one instant run once there.

`shifted` turns the raw occurrence function into the function of the
instants that run: the first shifted instant strictly after `after`. A shift
only looks through MAX_RUN_DAYS excluded days in a row: a calendar that
leaves no business day that near is a calculation error (the row is
disabled, as for any occurrence that cannot be computed).

Pure: the calendars, the zone and the raw function are arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo

from cronplane.core.calendars import Calendar
from cronplane.core.cron_zones import known_zone, wall_instant
from cronplane.errors import InvalidRequest

NextAfter = Callable[[datetime], "datetime | None"]
MAX_RUN_DAYS: Final = 31
MAX_SKIPPED_DAYS: Final = 366
_DAY: Final = timedelta(days=1)
_TICK: Final = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Exclusion:
    """The calendars a schedule excludes, what an excluded occurrence does, its zone."""

    calendars: tuple[Calendar, ...]
    policy: str  # "skip" | "previous" | "next"
    zone: ZoneInfo

    def why(self, day: date) -> tuple[str, str] | None:
        """The first calendar that excludes `day` and why, or None: a business day."""
        for calendar in self.calendars:
            reason = calendar.why(day)
            if reason is not None:
                return calendar.name, reason
        return None

    def excluded(self, instant: datetime) -> tuple[str, str] | None:
        """`why` of the instant's local date in the schedule's zone."""
        return self.why(self._day(instant))

    def business_day(self, day: date) -> date:
        """`day` if no calendar excludes it, else the business day before (`previous`) or
        after (`next`); ValueError past MAX_RUN_DAYS excluded days."""
        step = -_DAY if self.policy == "previous" else _DAY
        found = day
        for _ in range(MAX_RUN_DAYS + 1):
            if self.why(found) is None:
                return found
            found += step
        raise ValueError(
            f"no business day within {MAX_RUN_DAYS} days of {day.isoformat()} "
            f"in calendars {', '.join(c.name for c in self.calendars)}"
        )

    def shift(self, occurrence: datetime) -> datetime:
        """Where one raw occurrence runs: itself on a business day, else its wall time on
        the business day `policy` names."""
        day = self._day(occurrence)
        target = self.business_day(day)
        return occurrence if target == day else self._place(occurrence, target)

    def shifted(self, raw: NextAfter) -> NextAfter:
        """The occurrence function of the instants that run under `previous` or `next`."""
        if self.policy == "next":
            return lambda after: self._next_later(raw, after)
        return lambda after: self._next_earlier(raw, after)

    def running(self, raw: NextAfter) -> NextAfter:
        """The occurrence function of what runs: moved (`previous`/`next`), or with the
        excluded occurrences left out (`skip`: a backfill enqueues none of them)."""
        if self.policy != "skip":
            return self.shifted(raw)

        def business(after: datetime) -> datetime | None:
            found = raw(after)
            # An excluded day is passed whole (one step a day, not one an occurrence);
            # a year with no occurrence on a business day is none at all.
            for _ in range(MAX_SKIPPED_DAYS):
                if found is None or self.excluded(found) is None:
                    return found
                found = raw(self._midnight(self._day(found) + _DAY) - _TICK)
            return None

        return business

    def origins(self, instant: datetime, raw: NextAfter) -> list[datetime]:
        """The raw occurrences that run at `instant` other than itself (the shift's
        sources, for the ledger), earliest first."""
        target, found = self._day(instant), []
        step = _DAY if self.policy == "previous" else -_DAY
        day = target + step
        for _ in range(MAX_RUN_DAYS):
            if self.why(day) is None:
                break
            candidate = self._place(instant, day)
            if raw(candidate - _TICK) == candidate and self.shift(candidate) == instant:
                found.append(candidate)
            day += step
        return sorted(found)

    def runs(self, raw: NextAfter, after: datetime, count: int) -> tuple[list[datetime], list[str]]:
        """The next `count` instants that run after `after`, and a note for each excluded
        occurrence among them (moved, or skipped: a preview shows what the ledger will)."""
        found: list[datetime] = []
        notes: list[str] = []
        step = raw if self.policy == "skip" else self.shifted(raw)
        try:
            at = step(after)
        except ValueError as error:  # no business day near: nothing runs, say why
            return found, [str(error)]
        # A skip policy may pass many excluded occurrences: bounded, as a preview is.
        for _ in range(count * 64):
            if at is None or len(found) >= count:
                break
            if self.policy == "skip":
                why = self.excluded(at)
                if why is None:
                    found.append(at)
                else:
                    notes.append(f"{self._shown(at)} is skipped: {why[0]} ({why[1]})")
            else:
                found.append(at)
                for origin in self.origins(at, raw):
                    calendar, reason = self.excluded(origin) or ("?", "?")
                    notes.append(
                        f"{self._shown(origin)} is excluded by {calendar} ({reason}): "
                        f"runs {self._shown(at)} ({self.policy} business day)"
                    )
            try:
                at = step(at)
            except ValueError as error:
                notes.append(str(error))
                break
        return found, notes

    def _shown(self, instant: datetime) -> str:
        return instant.astimezone(self.zone).strftime("%a %Y-%m-%d %H:%M %Z")

    # `next`: a shift never moves an occurrence earlier. An occurrence at or
    # before `after` can still land after it when it sits in the excluded run
    # that ends at (or contains) the day of `after`, so the scan starts at that
    # run's first day; it stops once a raw occurrence is no earlier than the
    # best found (nothing later can land before it).
    def _next_later(self, raw: NextAfter, after: datetime) -> datetime | None:
        start = self._day(after)
        for _ in range(MAX_RUN_DAYS):
            if self.why(start - _DAY) is None:
                break
            start -= _DAY
        cursor = self._midnight(start) - _TICK
        best: datetime | None = None
        while True:
            occurrence = raw(cursor)
            if occurrence is None or (best is not None and occurrence >= best):
                return best
            landed = self.shift(occurrence)
            if landed > after:
                best = landed if best is None else min(best, landed)
                # Later occurrences of that day land later on the same business day.
                cursor = max(occurrence, self._midnight(self._day(occurrence) + _DAY) - _TICK)
            else:
                # It landed on the day of `after`, not past it: look from `after`'s wall time.
                cursor = max(occurrence, self._place(after, self._day(occurrence)) - _TICK)

    # `previous`: a shift never moves an occurrence later, so only occurrences
    # after `after` can land after it; the scan stops at the first occurrence
    # whose business day is past the best one's.
    def _next_earlier(self, raw: NextAfter, after: datetime) -> datetime | None:
        cursor, best = after, None
        while True:
            occurrence = raw(cursor)
            if occurrence is None:
                return best
            day = self._day(occurrence)
            target = self.business_day(day)
            if best is not None and target > self._day(best):
                return best
            landed = occurrence if target == day else self._place(occurrence, target)
            if landed > after:
                best = landed if best is None else min(best, landed)
                cursor = max(occurrence, self._midnight(day + _DAY) - _TICK)
            elif target < self._day(after):
                cursor = max(occurrence, self._midnight(day + _DAY) - _TICK)
            else:
                cursor = max(occurrence, self._place(after, day) - _TICK)

    def _day(self, instant: datetime) -> date:
        return instant.astimezone(self.zone).date()

    def _place(self, instant: datetime, day: date) -> datetime:
        """`instant`'s wall time on `day`, as an instant (wall_instant's DST rules: a
        time in a gap is the jump's instant, so a cursor placed there looks from just
        before it)."""
        wall = instant.astimezone(self.zone).replace(tzinfo=None, fold=0)
        return wall_instant(datetime.combine(day, wall.time()), self.zone)

    def _midnight(self, day: date) -> datetime:
        return wall_instant(datetime.combine(day, time()), self.zone).astimezone(UTC)


def exclusion_of(
    exclude: Sequence[str], on_excluded: str, timezone: str, calendars: Mapping[str, Calendar]
) -> Exclusion | None:
    """A row's Exclusion from its `exclude` names and the tenant's `calendars`; None when
    it excludes none. InvalidRequest (field `exclude`) names a calendar that does not exist."""
    if not exclude:
        return None
    missing = [name for name in exclude if name not in calendars]
    if missing:
        raise InvalidRequest(
            f"calendar {missing[0]!r} not found: create it first (cronplane calendar add)",
            {"field": "exclude", "calendar": missing[0]},
        )
    return Exclusion(tuple(calendars[n] for n in exclude), on_excluded, known_zone(timezone))
