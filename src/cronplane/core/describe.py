"""A schedule in English: "At 02:30, every day".

cron-descriptor does the 5-field work (24-hour clock); this wrapper adds the
exact intervals it does not know and guarantees a description never raises,
so a preview can always show something.
"""

from __future__ import annotations

from cron_descriptor import ExpressionDescriptor, Options

from cronplane.core.cron_forms import CronExpr, Expression, IntervalExpr
from cronplane.core.cron_once import OnceExpr, describe_once

_UNITS = ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second"))


def _interval(expr: IntervalExpr) -> str:
    # One number in the largest unit that divides the period, as the normalized
    # form says it: `@every 90s` is "Every 90 seconds", not "1 minute 30 seconds".
    for size, name in _UNITS:
        if expr.seconds % size == 0:
            count = expr.seconds // size
            every = f"Every {name}" if count == 1 else f"Every {count} {name}s"
            return f"{every}, counted from 1970-01-01 00:00 UTC"
    raise AssertionError("seconds always divide by 1")  # pragma: no cover


def _every_day(expr: CronExpr) -> bool:
    dom, dow = expr.dom, expr.dow
    return (
        len(expr.months) == 12
        and len(dom.values) == 31
        and len(dow.values) == 7
        and not (dom.last or dom.last_weekday or dom.nearest_weekday)
    )


_ORDINALS = ("", "first", "second", "third", "fourth", "fifth")
_WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


def _weekday(token: str) -> str:
    index = _NAMES.index(token) if token in _NAMES else int(token) % 7
    return _WEEKDAYS[index]


def _day_item(item: str) -> str:
    if item == "L":
        return "the last day"
    if item == "LW":
        return "the last weekday"
    if item.endswith("W"):
        return f"the weekday nearest day {item[:-1]}"
    return f"day {item}"


def _weekday_item(item: str) -> str:
    if "#" in item:
        weekday, k = item.split("#")
        return f"the {_ORDINALS[int(k)]} {_weekday(weekday)}"
    if item.endswith("L"):
        return f"the last {_weekday(item[:-1])}"
    if item.isascii() and (item.isdigit() or item in _NAMES):
        return _weekday(item)
    return f"weekdays {item}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _with_special_lists(expr: CronExpr) -> tuple[str, str]:
    """cron-descriptor garbles lists mixing L/W/# with other items (`1W,L`):
    describe such a field ourselves and hand the descriptor `*` in its place."""
    fields = expr.normalized.split()
    extra = ""
    if "," in fields[2] and any(c in fields[2] for c in "LW"):
        extra += f", on {_and([_day_item(i) for i in fields[2].split(',')])} of the month"
        fields[2] = "*"
    if "," in fields[4] and any(c in fields[4] for c in "L#"):
        extra += f", on {_and([_weekday_item(i) for i in fields[4].split(',')])} of the month"
        fields[4] = "*"
    elif len(expr.dow.values) == 7 and fields[4] != "*":
        fields[4] = "*"  # `0-7` would read "Sunday through Sunday"
    return " ".join(fields), extra


def describe(expr: Expression) -> str:
    """The English description of a compiled expression; never raises."""
    if isinstance(expr, IntervalExpr):
        return _interval(expr)
    if isinstance(expr, OnceExpr):
        return describe_once(expr)
    options = Options()
    options.use_24hour_time_format = True
    options.verbose = False
    try:
        text, extra = _with_special_lists(expr)
        text = str(ExpressionDescriptor(text, options).get_description()) + extra
    except Exception:
        # A description is a courtesy; a descriptor bug must not break a preview.
        return f"Cron schedule {expr.normalized}"
    if not expr.day_or and ", or on " in text:
        # Vixie: a day field starting with `*` (like `*/2`) makes it AND, not OR.
        text = text.replace(", or on ", ", but only on ")
    if expr.fixed_time and _every_day(expr) and ", " not in text:
        text += ", every day"
    return text
