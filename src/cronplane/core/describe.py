"""A schedule in English: "At 02:30, every day".

cron-descriptor does the 5-field work (24-hour clock); this wrapper adds the
exact intervals it does not know and guarantees a description never raises,
so a preview can always show something.
"""

from __future__ import annotations

from cron_descriptor import ExpressionDescriptor, Options

from cronplane.core.cron import CronExpr, Expression, IntervalExpr

_UNITS = ((86_400, "day"), (3_600, "hour"), (60, "minute"))


def _interval(expr: IntervalExpr) -> str:
    for size, name in _UNITS:
        if expr.seconds % size == 0:
            count = expr.seconds // size
            every = f"Every {name}" if count == 1 else f"Every {count} {name}s"
            return f"{every}, counted from 1970-01-01 00:00 UTC"
    return f"Every {expr.seconds} seconds"  # pragma: no cover - intervals are whole minutes


def _every_day(expr: CronExpr) -> bool:
    dom, dow = expr.dom, expr.dow
    return (
        len(expr.months) == 12
        and len(dom.values) == 31
        and len(dow.values) == 7
        and not (dom.last or dom.last_weekday or dom.nearest_weekday)
    )


def describe(expr: Expression) -> str:
    """The English description of a compiled expression; never raises."""
    if isinstance(expr, IntervalExpr):
        return _interval(expr)
    options = Options()
    options.use_24hour_time_format = True
    options.verbose = False
    try:
        text = str(ExpressionDescriptor(expr.normalized, options).get_description())
    except Exception:
        # A description is a courtesy; a descriptor bug must not break a preview.
        return f"Cron schedule {expr.normalized}"
    if expr.fixed_time and _every_day(expr) and ", " not in text:
        text += ", every day"
    return text
