"""`cron/explain`: what an expression means, for editors typing one (no tenant data)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from cronplane.api.auth import Authenticated
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import MAX_CRON, MAX_NAME, MAX_ZONE, NUL_FREE, ExplainBody, Preview
from cronplane.core.dst import DEBIAN, DstPolicy, Gap, Repeat
from cronplane.core.excluded import Exclusion
from cronplane.core.explain import explain

router = APIRouter(prefix="/cron", tags=["cron"])
Context = Annotated[ApiContext, Depends(current_context)]


def preview(
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
) -> Preview:
    """`core.explain.explain` as the API's body; its errors are the answer's (X400001CRNINV)."""
    found = explain(
        expression,
        timezone,
        after,
        count,
        seed,
        window=window,
        runs_left=runs_left,
        dst=dst,
        exclusion=exclusion,
    )
    return Preview(
        expression=found.expression,
        normalized=found.normalized,
        description=found.description,
        timezone=found.timezone,
        next=list(found.next),
        notes=[*found.notes, *found.excluded],
    )


@router.post("/explain", response_model=Preview, summary="Explain an expression")
def explain_post(body: ExplainBody, ctx: Context, _: Authenticated) -> Preview:
    """Normalized form, English description and the next `count` occurrences."""
    after = body.after or ctx.clock.now()
    dst = DstPolicy(body.dst_gap, body.dst_repeat)
    return preview(body.expression, body.timezone, after, body.count, body.seed, dst=dst)


@router.get("/explain", response_model=Preview, summary="Explain an expression (query form)")
def explain_get(
    ctx: Context,
    _: Authenticated,
    expression: Annotated[
        str, Query(min_length=1, max_length=MAX_CRON, json_schema_extra=NUL_FREE)
    ],
    timezone: Annotated[
        str, Query(min_length=1, max_length=MAX_ZONE, json_schema_extra=NUL_FREE)
    ] = "UTC",
    count: Annotated[int, Query(ge=1, le=100)] = 5,
    after: datetime | None = None,
    seed: Annotated[str | None, Query(max_length=MAX_NAME, json_schema_extra=NUL_FREE)] = None,
    dst_gap: Gap = "shift",
    dst_repeat: Repeat | None = None,
) -> Preview:
    """The same as POST, for links and quick checks."""
    dst = DstPolicy(dst_gap, dst_repeat)
    return preview(expression, timezone, after or ctx.clock.now(), count, seed, dst=dst)
