"""When a schedule runs next: the product's two questions about a stored expression.

    next_run(cron, timezone, after, start_at=, end_at=, dst=) -> datetime | None   the dispatcher's step
    first_run(cron, timezone, now, start_at=, end_at=, dst=) -> datetime          a new schedule

`next_run` is the first occurrence strictly after `after` inside the active
window [start_at, end_at] (either bound optional), or None when the
expression never fires again there: the schedule has ended. `first_run` adds the five-year rule: a schedule
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
from cronplane.core.dst import DEBIAN, DstPolicy
from cronplane.core.excluded import Exclusion
from cronplane.core.firing import NextAfter
from cronplane.core.model import Schedule
from cronplane.core.validation import cron_rejected
from cronplane.errors import CronRejected, ScheduleSyntax

FIRST_RUN_HORIZON: Final = timedelta(days=5 * 366)
_SECOND: Final = timedelta(seconds=1)


def next_run(
    cron: str,
    timezone: str,
    after: datetime,
    *,
    start_at: datetime | None = None,
    end_at: datetime | None = None,
    dst: DstPolicy = DEBIAN,
    exclusion: Exclusion | None = None,
) -> datetime | None:
    """The first occurrence of `cron` in `timezone` strictly after `after`, not before
    `start_at` and not after `end_at`, under the DST policy `dst`; None when there is none.
    With `exclusion` that moves an excluded day's occurrences (previous/next), the
    instant it moves to (core.excluded); `skip` leaves them where they are.

    Raises ScheduleSyntax for an unparsable expression and UnknownZone for an
    unknown zone (the dispatcher disables such a row).
    """
    expression, zone = parse(cron), known_zone(timezone)

    def raw(instant: datetime) -> datetime | None:
        return expression.next_after(instant, zone, dst)

    step: NextAfter = raw
    if exclusion is not None and exclusion.policy != "skip":
        step = exclusion.shifted(raw)
    if start_at is not None and start_at > after:
        after = start_at - _SECOND  # so an occurrence at start_at itself counts
    try:
        found = step(after)
        while found is not None and start_at is not None and found < start_at:
            found = step(found)  # start_at had a fraction of a second
    except ValueError as error:  # a calendar with no business day near (core.excluded)
        if exclusion is None:
            raise
        raise CronRejected(str(error), {"field": "exclude", "cron": cron}) from None
    if found is None or (end_at is not None and found > end_at):
        return None
    return found


def first_run(
    cron: str,
    timezone: str,
    now: datetime,
    *,
    start_at: datetime | None = None,
    end_at: datetime | None = None,
    dst: DstPolicy = DEBIAN,
    exclusion: Exclusion | None = None,
) -> datetime:
    """The first occurrence after max(now, start_at) up to end_at; CronRejected when there
    is none within five years of `now` (a one-off in the past is one such)."""
    try:
        found = next_run(
            cron, timezone, now, start_at=start_at, end_at=end_at, dst=dst, exclusion=exclusion
        )
        unbounded = found if found is not None else next_run(cron, timezone, now, dst=dst)
    except ScheduleSyntax as error:
        raise cron_rejected(cron, error) from error
    if found is not None and found - now <= FIRST_RUN_HORIZON:
        return found
    detail = {"field": "cron", "cron": cron}
    if parse(cron).is_once and unbounded is None:
        message = f"one-off {cron!r} is not in the future (zone {timezone}): it would never fire"
    elif found is None and unbounded is not None:
        message = (
            f"cron {cron!r} never fires between start_at and end_at "
            f"({_bound(start_at)} .. {_bound(end_at)}, zone {timezone})"
        )
    else:
        message = f"cron {cron!r} never fires in the next five years (zone {timezone})"
    raise CronRejected(message, detail)


def row_next_run(row: Schedule, after: datetime, exclusion: Exclusion | None) -> datetime | None:
    """A stored row's nominal next occurrence after `after`: within its window, run limit,
    DST policy and excluded days (`exclusion`); None when nothing is left."""
    if row.runs_left is not None and row.runs_left <= 0:
        return None
    return next_run(
        row.cron,
        row.timezone,
        after,
        start_at=row.start_at,
        end_at=row.end_at,
        dst=row.dst,
        exclusion=exclusion,
    )


def _bound(instant: datetime | None) -> str:
    return "open" if instant is None else instant.isoformat()


def next_run_function(cron: str, timezone: str, dst: DstPolicy = DEBIAN) -> NextAfter:
    """`next_run` of one stored schedule, as the dispatcher's occurrence loader wants it.

    Errors surface when it is called, per row, as `next_run`'s do; the
    dispatcher's planner memoizes the calls within a batch.
    """

    def next_after(after: datetime) -> datetime | None:
        return next_run(cron, timezone, after, dst=dst)

    return next_after
