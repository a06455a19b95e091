"""An expression explained for someone typing it: normalized, described, its next runs.

One answer behind the API's `cron/explain` and a schedule's preview, the
editor's live feedback and `cronplane cron explain`, so the three edges cannot
tell a user different things. A rejected expression is the service's
X400001CRNINV (`validation.cron_rejected`), the code a create would answer.
Pure: the instant to start from is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from cronplane.core.cron import Cron, known_zone, parse
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


def explain(
    expression: str, timezone: str, after: datetime, count: int, seed: str | None = None
) -> Explanation:
    """Normalize, describe and list the next `count` runs of `expression` after `after`.

    `seed` resolves `H`; a naive `after` is a wall time in the zone. Raises
    UnknownZone for the zone (checked first), CronRejected for the expression.
    """
    zone = known_zone(timezone)
    try:
        cron = parse(expression, seed)
    except ScheduleSyntax as error:
        raise cron_rejected(expression, error, parser_detail=True) from error
    return Explanation(
        expression=expression,
        normalized=cron.normalized,
        description=cron.describe(),
        timezone=timezone,
        next=tuple(cron.upcoming(after, count, zone)),
        cron=cron,
    )
