"""An expression explained for someone typing it: normalized, described, its next runs.

One answer behind the API's `cron/explain` and a schedule's preview, the
editor's live feedback and `cronplane cron explain`, so the three edges cannot
tell a user different things. A rejected expression is the service's
X400001CRNINV (`validation.cron_rejected`), the code a create would answer.
Pure: the instant to start from is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from cronplane.core.cron import Cron, known_zone, parse, start_instant
from cronplane.core.dst import DEBIAN, DstPolicy
from cronplane.core.dst_notes import dst_notes
from cronplane.core.excluded import Exclusion
from cronplane.core.validation import cron_rejected
from cronplane.errors import ScheduleSyntax


@dataclass(frozen=True, slots=True)
class Explanation:
    """What `expression` means in `timezone`, and when it runs next (aware UTC)."""

    expression: str
    normalized: str
    description: str
    timezone: str
    next: tuple[datetime, ...]
    cron: Cron = field(repr=False, compare=False)
    # What the DST transitions of the next year do to it (core.dst_notes).
    notes: tuple[str, ...] = ()
    # The excluded occurrences among (or between) the runs: moved or skipped (core.excluded).
    excluded: tuple[str, ...] = ()


def explain(
    expression: str,
    timezone: str,
    after: datetime,
    count: int,
    seed: str | None = None,
    *,
    window: tuple[datetime | None, datetime | None] = (None, None),
    runs_left: int | None = None,
    dst: DstPolicy = DEBIAN,
    exclusion: Exclusion | None = None,
) -> Explanation:
    """Normalize, describe and list the next `count` runs of `expression` after `after`.

    `seed` resolves `H`; a naive `after` is a wall time in the zone. A stored
    schedule's preview passes its active `window` (start_at, end_at) and
    `runs_left`: no run outside the one, nor more than the other; `dst` is its DST
    policy, which the runs follow and the notes name; `exclusion` its excluded days
    (core.excluded: runs moved or skipped, each with a note). Raises
    UnknownZone for the zone (checked first), CronRejected for the expression.
    """
    zone = known_zone(timezone)
    try:
        cron = parse(expression, seed)
    except ScheduleSyntax as error:
        raise cron_rejected(expression, error, parser_detail=True) from error
    runs, excluded_notes = _bounded(cron, zone, after, count, window, runs_left, dst, exclusion)
    return Explanation(
        expression=expression,
        normalized=cron.normalized,
        description=cron.describe(),
        timezone=timezone,
        next=runs,
        cron=cron,
        notes=tuple(dst_notes(cron, timezone, after, dst)),
        excluded=tuple(excluded_notes),
    )


def _bounded(
    cron: Cron,
    zone: tzinfo,
    after: datetime,
    count: int,
    window: tuple[datetime | None, datetime | None],
    runs_left: int | None,
    dst: DstPolicy,
    exclusion: Exclusion | None = None,
) -> tuple[tuple[datetime, ...], list[str]]:
    start_at, end_at = window
    if runs_left is not None:
        count = min(count, max(runs_left, 0))
    if start_at is not None and start_at > start_instant(after, zone):
        after = start_at - timedelta(seconds=1)  # an occurrence at start_at counts
    notes: list[str] = []
    if exclusion is None:
        found = cron.upcoming(after, count, zone, dst)
    else:
        found, notes = exclusion.runs(
            lambda instant: cron.next_after(instant, zone, dst), start_instant(after, zone), count
        )
    inside = tuple(
        moment
        for moment in found
        if (start_at is None or moment >= start_at) and (end_at is None or moment <= end_at)
    )
    return inside, notes
