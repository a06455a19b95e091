"""When a schedule runs next: the product's two questions about a stored expression.

    next_run(cron, timezone, after) -> datetime | None   the dispatcher's step
    first_run(cron, timezone, now) -> datetime           a new or re-enabled schedule

`next_run` is the first occurrence strictly after `after`, or None when the
expression never fires again. `first_run` adds the five-year rule: a schedule
must fire within five years of being created, edited or enabled, so
"0 0 29 2 *" in 2096 (no leap day until 2104) is refused up front rather
than sitting idle. The search itself is `cron_search`; parsing is
`cron.parse`, whose cache makes the dispatcher's repeated calls cheap.

Pure: the instant is always an argument. Every datetime returned is aware UTC.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from cronplane.core.cron import known_zone, parse
from cronplane.core.firing import NextAfter
from cronplane.core.validation import cron_rejected
from cronplane.errors import CronRejected, ScheduleSyntax

FIRST_RUN_HORIZON: Final = timedelta(days=5 * 366)


def next_run(cron: str, timezone: str, after: datetime) -> datetime | None:
    """The first occurrence of `cron` in `timezone` strictly after `after`; None when none.

    Raises ScheduleSyntax for an unparsable expression and UnknownZone for an
    unknown zone (the dispatcher disables such a row).
    """
    return parse(cron).next_after(after, known_zone(timezone))


def first_run(cron: str, timezone: str, now: datetime) -> datetime:
    """The first occurrence after `now`; CronRejected when there is none within five years."""
    try:
        found = next_run(cron, timezone, now)
    except ScheduleSyntax as error:
        raise cron_rejected(cron, error) from error
    if found is None or found - now > FIRST_RUN_HORIZON:
        raise CronRejected(
            f"cron {cron!r} never fires in the next five years (zone {timezone})",
            {"field": "cron", "cron": cron},
        )
    return found


def next_run_function(cron: str, timezone: str) -> NextAfter:
    """`next_run` of one stored schedule, as the dispatcher's occurrence loader wants it.

    Errors surface when it is called, per row, as `next_run`'s do; the
    dispatcher's planner memoizes the calls within a batch.
    """

    def next_after(after: datetime) -> datetime | None:
        return next_run(cron, timezone, after)

    return next_after
