"""Schedule expressions: every accepted form, its normalized text, its compiled value.

`cronplane.core.cron.parse` is the public entry (with its cache); this module
compiles text into the `CronExpr` / `IntervalExpr` that the search walks.

The forms (SPEC §3) and what they normalize to:

- 5-field cron `m h dom mon dow`  -> itself: single spaces, upper case, `?` as `*`,
                                     `H` resolved to numbers
- `@hourly` ... `@annually`       -> the 5-field equivalents
- `every N minutes|hours|days`    -> `*/N * * * *`, `0 */N * * *`, `0 0 * * *`, or
                                     an exact interval `@every N(m|h|d)`
- `at HH:MM`, `every day at HH:MM` -> `MM HH * * *`
- `@every N(m|h|d)`               -> itself, in the largest unit that divides it

The rules for edge cases the SPEC leaves open are written in docs/cron.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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

MAX_LENGTH: Final = 256
# Longest exact interval: ten years; anything longer is almost surely a typo.
MAX_INTERVAL_MINUTES: Final = 3650 * 1440

ALIASES: Final = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
UNIT_MINUTES: Final = {"m": 1, "h": 60, "d": 1440}

_SPACES = re.compile(r"[ \t]+")
_EVERY = re.compile(
    r"every(?:[ \t]+([0-9]+))?[ \t]+(minutes?|hours?|days?)", re.ASCII | re.IGNORECASE
)
_AT = re.compile(
    r"(?:every[ \t]+day[ \t]+)?at[ \t]+([0-9]{1,2}):([0-9]{2})", re.ASCII | re.IGNORECASE
)
_INTERVAL = re.compile(r"@every[ \t]+([0-9]+)[ \t]*([a-z]+)", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class IntervalExpr:
    """An exact interval: fires at every instant t with t mod `seconds` == 0 (Unix time)."""

    normalized: str
    seconds: int


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

    def days(self, length: int, first_weekday: int) -> tuple[int, ...]:
        """Sorted days (1-based) that match in a month of `length` days starting on
        `first_weekday` (0 = Sunday)."""
        key = (length, first_weekday)
        found = self._days.get(key)
        if found is None:
            found = self._days[key] = _matching_days(self, length, first_weekday)
        return found


Expression = CronExpr | IntervalExpr


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


def _interval(text: str, minutes: int) -> IntervalExpr:
    if not 1 <= minutes <= MAX_INTERVAL_MINUTES:
        reject(text, "interval", "the interval must be between 1 minute and 3650 days")
    for unit in ("d", "h", "m"):
        size = UNIT_MINUTES[unit]
        if minutes % size == 0:
            return IntervalExpr(f"@every {minutes // size}{unit}", minutes * 60)
    raise AssertionError("minutes always divide by 1")  # pragma: no cover


def _number(text: str, token: str, what: str) -> int:
    # The regexes only let ASCII digits through; cap the length so int() stays cheap.
    if len(token) > 9:
        reject(text, what, f"{token} is too large")
    return int(token)


def _every(text: str, count_text: str | None, unit_word: str) -> str | IntervalExpr:
    """`every N unit`: a cron form when one exists, else an exact interval."""
    count = 1 if count_text is None else _number(text, count_text, "interval")
    if count == 0:
        reject(text, "interval", "N must be at least 1")
    minutes = count * UNIT_MINUTES[unit_word[0].lower()]
    # Whole hours and whole days are said in the larger unit first, so that
    # `every 60 minutes` is `every 1 hour` and `every 24 hours` is `every 1 day`.
    if minutes % 1440 == 0:
        return "0 0 * * *" if minutes == 1440 else _interval(text, minutes)
    if minutes % 60 == 0:
        hours = minutes // 60
        return f"0 */{hours} * * *" if 24 % hours == 0 else _interval(text, minutes)
    return f"*/{minutes} * * * *" if 60 % minutes == 0 else _interval(text, minutes)


def _special_form(text: str, stripped: str) -> str | IntervalExpr | None:
    """The non-5-field forms; None when `stripped` is none of them."""
    lowered = stripped.lower()
    if lowered in ALIASES:
        return ALIASES[lowered]
    if lowered.startswith("@every"):
        match = _INTERVAL.fullmatch(stripped)
        if match is None:
            reject(text, "interval", "expected @every N followed by m, h or d (e.g. @every 90m)")
        unit = match[2].lower()
        if unit == "s":
            reject(text, "interval", "seconds are not supported; the smallest unit is m")
        if unit not in UNIT_MINUTES:
            reject(text, "interval", f"unknown unit {match[2]!r}; use m, h or d")
        return _interval(text, _number(text, match[1], "interval") * UNIT_MINUTES[unit])
    if lowered.startswith("@"):
        reject(text, "expression", f"unknown alias {stripped!r}")
    match = _AT.fullmatch(stripped)
    if match is not None:
        hour, minute = int(match[1]), int(match[2])
        if hour > 23:
            reject(text, "hour", f"{match[1]} is out of range 0-23")
        if minute > 59:
            reject(text, "minute", f"{match[2]} is out of range 0-59")
        return f"{minute} {hour} * * *"
    match = _EVERY.fullmatch(stripped)
    if match is not None:
        return _every(text, match[1], match[2])
    return None


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
    special = _special_form(text, stripped)
    if isinstance(special, IntervalExpr):
        return special
    return _compile_cron(text, stripped if special is None else special, seed)


def _compile_cron(text: str, cron_text: str, seed: str | None) -> CronExpr:
    parts = _SPACES.split(cron_text.upper())
    if len(parts) == 6:
        reject(
            text,
            "expression",
            "6 fields given, but seconds are not supported: "
            "use 5 fields (minute hour day-of-month month day-of-week)",
        )
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
