"""`cron/explain`: what an expression means, for editors typing one (no tenant data)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from cronplane.api.auth import Authenticated
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import MAX_CRON, MAX_NAME, MAX_ZONE, ExplainBody, Preview
from cronplane.core.cron import known_zone, parse
from cronplane.errors import CronRejected, ScheduleSyntax

router = APIRouter(prefix="/cron", tags=["cron"])
Context = Annotated[ApiContext, Depends(current_context)]


def explain(
    expression: str, timezone: str, after: datetime, count: int, seed: str | None = None
) -> Preview:
    """Normalize, describe and preview `expression` in `timezone`.

    A rejected expression is CronRejected (X400001CRNINV, quoting it), the
    code a create would answer; a naive `after` is a wall time in the zone.
    """
    zone = known_zone(timezone)
    try:
        cron = parse(expression, seed)
    except ScheduleSyntax as error:
        raise CronRejected(
            f"cron {expression!r} rejected: {error.message}",
            {"field": "cron", "cron": expression, **error.detail},
        ) from error
    start = after.replace(tzinfo=zone) if after.tzinfo is None else after
    return Preview(
        expression=expression,
        normalized=cron.normalized,
        description=cron.describe(),
        timezone=timezone,
        next=cron.upcoming(start, count, zone),
    )


@router.post("/explain", response_model=Preview, summary="Explain an expression")
def explain_post(body: ExplainBody, ctx: Context, _: Authenticated) -> Preview:
    """Normalized form, English description and the next `count` occurrences."""
    after = body.after or ctx.clock.now()
    return explain(body.expression, body.timezone, after, body.count, body.seed)


@router.get("/explain", response_model=Preview, summary="Explain an expression (query form)")
def explain_get(
    ctx: Context,
    _: Authenticated,
    expression: Annotated[str, Query(min_length=1, max_length=MAX_CRON)],
    timezone: Annotated[str, Query(min_length=1, max_length=MAX_ZONE)] = "UTC",
    count: Annotated[int, Query(ge=1, le=100)] = 5,
    after: datetime | None = None,
    seed: Annotated[str | None, Query(max_length=MAX_NAME)] = None,
) -> Preview:
    """The same as POST, for links and quick checks."""
    return explain(expression, timezone, after or ctx.clock.now(), count, seed)
