"""The spoken forms of a schedule expression: aliases, `every …`, `at HH:MM`, `@every …`.

`core/cron_forms.compile_expression` asks `special_form` first; what it
answers is either the 5-field cron text it means or an exact interval
(`IntervalExpr`), and a refusal is the parser's coded `ScheduleSyntax`.
Normalizations are listed in cron_forms's docstring and docs/cron.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NoReturn

from cronplane.core.cron_fields import reject

# Longest exact interval: ten years; anything longer is almost surely a typo.
MAX_INTERVAL_SECONDS: Final = 3650 * 86_400

ALIASES: Final = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
# Largest first: the order a sum must be written in, and the canonical unit's search order.
UNIT_SECONDS: Final = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}

_EVERY = re.compile(
    r"every(?:[ \t]+([0-9]+))?[ \t]+(seconds?|minutes?|hours?|days?)", re.ASCII | re.IGNORECASE
)
# `every 1 hour 30 minutes`, `every 1 minute and 30 seconds`: a sum, each part numbered.
_EVERY_PART = r"[0-9]+[ \t]+(?:second|minute|hour|day)s?"
_EVERY_SUM = re.compile(
    rf"every[ \t]+{_EVERY_PART}(?:(?:[ \t]*,[ \t]*|[ \t]+(?:and[ \t]+)?){_EVERY_PART})+",
    re.ASCII | re.IGNORECASE,
)
_SUM_PART = re.compile(r"([0-9]+)[ \t]+([a-z])[a-z]*", re.ASCII | re.IGNORECASE)
# Units cron has no word for: what to write instead (see `_calendar_unit`).
_CALENDAR_UNIT = re.compile(
    r"every(?:[ \t]+([0-9]+))?[ \t]+(weeks?|months?|years?)", re.ASCII | re.IGNORECASE
)
_AT = re.compile(
    r"(?:every[ \t]+day[ \t]+)?at[ \t]+([0-9]{1,2}):([0-9]{2})", re.ASCII | re.IGNORECASE
)
_INTERVAL = re.compile(r"@every[ \t]+((?:[0-9]+[ \t]*[a-z]+[ \t]*)+)", re.ASCII | re.IGNORECASE)
_INTERVAL_PART = re.compile(r"([0-9]+)[ \t]*([a-z]+)[ \t]*", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class IntervalExpr:
    """An exact interval: fires at every instant t with t mod `seconds` == 0 (Unix time)."""

    normalized: str
    seconds: int


def _interval(text: str, seconds: int) -> IntervalExpr:
    """The exact interval of `seconds`, said in the largest unit that divides it."""
    if not 1 <= seconds <= MAX_INTERVAL_SECONDS:
        reject(text, "interval", "the interval must be between 1 second and 3650 days")
    for unit, size in UNIT_SECONDS.items():
        if seconds % size == 0:
            return IntervalExpr(f"@every {seconds // size}{unit}", seconds)
    raise AssertionError("seconds always divide by 1")  # pragma: no cover


def _number(text: str, token: str, what: str) -> int:
    # The regexes only let ASCII digits through; cap the length so int() stays cheap.
    if len(token) > 9:
        reject(text, what, f"{token} is too large")
    return int(token)


def _every(text: str, seconds: int) -> str | IntervalExpr:
    """`every N unit` (N in seconds): a cron form when one exists, else an exact interval.

    Seconds that make whole minutes follow the minute rules, so `every 120
    seconds` is `every 2 minutes` is `*/2 * * * *`; no cron field counts seconds.
    """
    if seconds % 60 != 0:
        return _interval(text, seconds)
    minutes = seconds // 60
    # Whole hours and whole days are said in the larger unit first, so that
    # `every 60 minutes` is `every 1 hour` and `every 24 hours` is `every 1 day`.
    if minutes % 1440 == 0:
        return "0 0 * * *" if minutes == 1440 else _interval(text, seconds)
    if minutes % 60 == 0:
        hours = minutes // 60
        return f"0 */{hours} * * *" if 24 % hours == 0 else _interval(text, seconds)
    return f"*/{minutes} * * * *" if 60 % minutes == 0 else _interval(text, seconds)


def _every_one(text: str, count_text: str | None, unit_word: str) -> str | IntervalExpr:
    """`every N unit`, `every unit` (N = 1); `every minutes` does not say how many."""
    if count_text is None:
        if unit_word.lower().endswith("s"):
            singular = unit_word.lower()[:-1]
            reject(
                text,
                "interval",
                f"how many {unit_word.lower()}? write 'every 5 {unit_word.lower()}', "
                f"or 'every {singular}' for one",
            )
        count = 1
    else:
        count = _number(text, count_text, "interval")
    if count == 0:
        reject(text, "interval", "N must be at least 1")
    return _every(text, count * UNIT_SECONDS[unit_word[0].lower()])


def _sum(text: str, parts: list[tuple[str, str]], example: str) -> int:
    """Seconds of (number, unit letter) parts, written largest unit first, each once."""
    order = list(UNIT_SECONDS)
    total, previous = 0, -1
    for count_text, unit in parts:
        position = order.index(unit)
        if position <= previous:
            reject(text, "interval", f"write each unit once, largest unit first (e.g. {example})")
        previous = position
        total += _number(text, count_text, "interval") * UNIT_SECONDS[unit]
    return total


def _every_sum(text: str, stripped: str) -> str | IntervalExpr:
    """`every 1 hour 30 minutes`: the sum, normalized as `every N seconds`."""
    parts = [(m[1], m[2].lower()) for m in _SUM_PART.finditer(stripped[len("every") :])]
    return _every(text, _sum(text, parts, "'every 1 minute 30 seconds'"))


def _calendar_unit(text: str, count_text: str | None, unit_word: str) -> NoReturn:
    """Weeks, months and years: refused, saying what to write instead."""
    count = 1 if count_text is None else _number(text, count_text, "interval")
    if count == 0:
        reject(text, "interval", "N must be at least 1")
    unit = unit_word.lower().rstrip("s")
    if unit == "week":
        advice = (
            "write '@weekly' (0 0 * * 0: Sundays at 00:00) or a weekly cron such as "
            "'0 9 * * MON', or 'every 7 days' (an exact interval counted from "
            "1970-01-01 00:00 UTC, a Thursday)"
            if count == 1
            else f"write 'every {7 * count} days' (an exact interval counted from "
            "1970-01-01 00:00 UTC, a Thursday), or a weekly cron such as '0 0 * * 0'"
        )
    elif unit == "month":
        advice = (
            "write '@monthly' (0 0 1 * *: the 1st at 00:00) or a cron such as '0 9 15 * *'"
            if count == 1
            else f"write a cron such as '0 0 1 */{count} *' (the 1st at 00:00, every "
            f"{count} months from January)"
            if 12 % count == 0
            else "write a cron that lists the months, such as '0 0 1 1,6,11 *'"
        )
    else:
        advice = "write '@yearly' (0 0 1 1 *: January 1st at 00:00) or a cron such as '0 0 15 6 *'"
    reject(text, "expression", f"cron cannot count {unit}s: {advice}")


def _every_interval(text: str, match: re.Match[str]) -> IntervalExpr:
    """`@every 90s`, `@every 1h30m`: the sum, kept an exact interval."""
    parts: list[tuple[str, str]] = []
    for part in _INTERVAL_PART.finditer(match[1]):
        unit = part[2].lower()
        if unit not in UNIT_SECONDS:
            reject(text, "interval", f"unknown unit {part[2]!r}; use s, m, h or d")
        parts.append((part[1], unit))
    return _interval(text, _sum(text, parts, "@every 1h30m"))


def special_form(text: str, stripped: str) -> str | IntervalExpr | None:
    """The non-5-field forms; None when `stripped` is none of them."""
    lowered = stripped.lower()
    if lowered in ALIASES:
        return ALIASES[lowered]
    if lowered.startswith("@every"):
        match = _INTERVAL.fullmatch(stripped)
        if match is None:
            reject(
                text,
                "interval",
                "expected @every N followed by s, m, h or d (e.g. @every 30s, @every 90m, "
                "@every 1h30m)",
            )
        return _every_interval(text, match)
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
        return _every_one(text, match[1], match[2])
    if _EVERY_SUM.fullmatch(stripped) is not None:
        return _every_sum(text, stripped)
    match = _CALENDAR_UNIT.fullmatch(stripped)
    if match is not None:
        _calendar_unit(text, match[1], match[2])
    return None
