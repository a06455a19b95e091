"""Schedule expressions: every accepted form, its normalized text, its compiled value.

`cronplane.core.cron.parse` is the public entry (with its cache); this module
compiles text into the `CronExpr` / `IntervalExpr` that the search walks.

The forms (SPEC §3) and what they normalize to:

- 5-field cron `m h dom mon dow`  -> itself: single spaces, upper case, `?` as `*`,
                                     `H` resolved to numbers
- `@hourly` ... `@annually`       -> the 5-field equivalents
- `every N seconds|minutes|hours|days` (or a sum: `every 1 minute 30 seconds`)
                                  -> `*/N * * * *`, `0 */N * * *`, `0 0 * * *` when the
                                     seconds make whole minutes that cron can say, else
                                     an exact interval `@every N(s|m|h|d)`
- `at HH:MM`, `every day at HH:MM` -> `MM HH * * *`
- `@every N(s|m|h|d)`, or a sum largest unit first (`@every 1m30s`)
                                  -> one number in the largest unit that divides it
- `once at 2027-01-01T03:00[+01:00]` -> `@once 2027-01-01T03:00[+01:00]` (`cron_once`)

The rules for edge cases the SPEC leaves open are written in docs/cron.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final

from cronplane.core.cron_fields import (
    DAY_OF_MONTH,
    DAY_OF_WEEK,
    FIELDS,
    CompiledField,
    FieldError,
    compile_field,
    reject,
    resolve_hash,
)
from cronplane.core.cron_once import OnceExpr, compile_once, is_once
from cronplane.core.cron_words import MAX_INTERVAL_SECONDS, IntervalExpr, special_form

__all__ = [
    "MAX_INTERVAL_SECONDS",
    "MAX_LENGTH",
    "CronExpr",
    "Expression",
    "IntervalExpr",
    "compile_expression",
]

MAX_LENGTH: Final = 256
_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True, slots=True)
class CronExpr:
    """A compiled 5-field expression.

    `fixed_time` is Debian cron's test for its DST rules: neither the minute
    nor the hour field starts with `*`. `day_or` is Vixie cron's: neither day
    field starts with `*`, so a day matching either field matches.
    """

    normalized: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: tuple[int, ...]
    dom: CompiledField
    dow: CompiledField
    fixed_time: bool
    day_or: bool
    # The matching days of a month depend only on its length and the weekday of
    # its 1st, so there are at most 28 distinct answers: memoize them.
    _days: dict[tuple[int, int], tuple[int, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def shortest_gap(self) -> int:
        """The shortest time between two fires on the wall clock, in seconds.

        A lower bound: the gap across midnight counts whenever two days in a row
        can match, and a daylight saving jump can shorten one real gap (as it
        shortens the day). Never below 60: cron's grain is the minute.
        """
        times = sorted(hour * 60 + minute for hour in self.hours for minute in self.minutes)
        gaps = [later - earlier for earlier, later in pairwise(times)]
        if self._days_in_a_row():
            gaps.append(times[0] + 1440 - times[-1])
        return 60 * min(gaps, default=1440)

    def _days_in_a_row(self) -> bool:
        """Whether two consecutive calendar days can both match (checked over every
        month shape; across a month's end, the next month starts the day after)."""
        for month in self.months:
            following = month % 12 + 1
            for length in _month_lengths(month):
                for first in range(7):
                    days = self.days(length, first)
                    if any(later == earlier + 1 for earlier, later in pairwise(days)):
                        return True
                    if days and days[-1] == length and following in self.months:
                        next_first = (first + length) % 7
                        if any(
                            self.days(next_length, next_first)[:1] == (1,)
                            for next_length in _month_lengths(following)
                        ):
                            return True
        return False

    def days(self, length: int, first_weekday: int) -> tuple[int, ...]:
        """Sorted days (1-based) that match in a month of `length` days starting on
        `first_weekday` (0 = Sunday)."""
        key = (length, first_weekday)
        found = self._days.get(key)
        if found is None:
            found = self._days[key] = _matching_days(self, length, first_weekday)
        return found


Expression = CronExpr | IntervalExpr | OnceExpr


def _nearest_weekday(day: int, length: int, first_weekday: int) -> int:
    """The weekday (Mon-Fri) nearest to `day`, never leaving the month."""
    weekday = (first_weekday + day - 1) % 7
    if weekday == 6:  # Saturday: Friday before, unless that is last month
        return day - 1 if day > 1 else day + 2
    if weekday == 0:  # Sunday: Monday after, unless that is next month
        return day + 1 if day < length else day - 2
    return day


def _matching_days(expr: CronExpr, length: int, first_weekday: int) -> tuple[int, ...]:
    dom, dow = expr.dom, expr.dow
    every_dow = len(dow.values) == 7
    if every_dow and (expr.day_or or len(dom.values) == 31):
        return tuple(range(1, length + 1))  # the common `* * *` day fields
    by_dom = {d for d in dom.values if d <= length}
    if dom.last:
        by_dom.add(length)
    if dom.last_weekday:
        by_dom.add(_nearest_weekday(length, length, first_weekday))
    for day in dom.nearest_weekday:
        # A day the month lacks (31W in April) matches nothing that month.
        if day <= length:
            by_dom.add(_nearest_weekday(day, length, first_weekday))
    if every_dow:
        return tuple(sorted(by_dom))
    by_dow = {
        day
        for weekday in dow.values
        for day in range(1 + (weekday - first_weekday) % 7, length + 1, 7)
    }
    for weekday in dow.last_of:
        first = 1 + (weekday - first_weekday) % 7
        by_dow.add(first + 7 * ((length - first) // 7))
    for weekday, k in dow.nth:
        day = 1 + (weekday - first_weekday) % 7 + 7 * (k - 1)
        if day <= length:
            by_dow.add(day)
    picked = by_dom | by_dow if expr.day_or else by_dom & by_dow
    return tuple(sorted(picked))


def _month_lengths(month: int) -> tuple[int, ...]:
    if month == 2:
        return (28, 29)
    return (30,) if month in (4, 6, 9, 11) else (31,)


def _fires_ever(expr: CronExpr) -> bool:
    dom, dow = expr.dom, expr.dow
    if dow.values and (expr.day_or or len(dom.values) == 31):
        return True  # every month has every weekday
    if len(dow.values) == 7 and (
        dom.last or dom.last_weekday or min(dom.values + dom.nearest_weekday, default=99) <= 28
    ):
        return True  # every month has days 1-28, a last day and a last weekday
    # Every (month, length, weekday of the 1st) combination occurs in the
    # 400-year Gregorian cycle, so this is exact, not a sampled guess.
    return any(
        expr.days(length, first)
        for month in expr.months
        for length in _month_lengths(month)
        for first in range(7)
    )


def _quote(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def compile_expression(text: str, seed: str | None = None) -> Expression:
    """Parse any accepted form into its compiled value (which carries `.normalized`).

    Raises only `ScheduleSyntax`, whose message quotes `text` and names the field.
    """
    if not isinstance(text, str):
        reject(repr(text), "expression", "an expression must be a string")
    if len(text) > MAX_LENGTH:
        reject(_quote(text), "expression", f"longer than {MAX_LENGTH} characters")
    stripped = text.strip(" \t\r\n")
    if not stripped:
        reject(text, "expression", "the expression is empty")
    if is_once(stripped):
        return compile_once(text, stripped)
    special = special_form(text, stripped)
    if isinstance(special, IntervalExpr):
        return special
    return _compile_cron(text, stripped if special is None else special, seed)


def _six_fields(parts: list[str]) -> str:
    """What to say to a 6-field (seconds-first) cron: cron's smallest field is the minute."""
    seconds, rest = parts[0], parts[1:]
    this_one = ""
    step = seconds[2:] if seconds.startswith(("*/", "0/")) else ""
    # Quartz numbers weekdays 1-7 from Sunday: only a day-of-week without digits reads the same.
    if seconds == "0" and not any(c.isdigit() for c in rest[-1]):
        this_one = f"; for this one: {' '.join(rest)!r} (the leading 0 dropped)"
    elif all(part in ("*", "?") for part in rest) and (
        seconds == "*" or (step.isascii() and step.isdigit() and len(step) <= 2)
    ):
        every = 1 if seconds == "*" else int(step)
        if 0 < every < 60 and 60 % every == 0:
            this_one = f"; for this one: 'every {every} second{'s' if every != 1 else ''}'"
    return (
        "6 fields given, but a seconds field is not supported: write 'every N seconds' "
        "(e.g. 'every 30 seconds', stored as '@every 30s') or 5 fields "
        f"(minute hour day-of-month month day-of-week){this_one}"
    )


def _compile_cron(text: str, cron_text: str, seed: str | None) -> CronExpr:
    parts = _SPACES.split(cron_text.upper())
    if len(parts) == 6:
        reject(text, "expression", _six_fields(parts))
    if len(parts) != 5:
        reject(
            text,
            "expression",
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}",
        )
    resolved: list[str] = []
    compiled: list[CompiledField] = []
    for kind, part in zip(FIELDS, parts, strict=True):
        try:
            if part == "?" and (kind is DAY_OF_MONTH or kind is DAY_OF_WEEK):
                part = "*"
            elif "?" in part:
                reject(text, kind.name, f"{part!r}: ? is allowed only alone in the day fields")
            part = resolve_hash(kind, part, seed)
            resolved.append(part)
            compiled.append(compile_field(kind, part))
        except FieldError as error:
            reject(text, error.kind.name, f"{error.text!r}: {error.reason}")
    minute, hour, dom, month, dow = compiled
    expr = CronExpr(
        normalized=" ".join(resolved),
        minutes=minute.values,
        hours=hour.values,
        months=month.values,
        dom=dom,
        dow=dow,
        fixed_time=not (minute.star or hour.star),
        day_or=not (dom.star or dow.star),
    )
    if not _fires_ever(expr):
        field_name = DAY_OF_MONTH.name if not dom.star else DAY_OF_WEEK.name
        reject(text, field_name, "never fires: no month has a matching day")
    return expr
