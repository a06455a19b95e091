"""Event routes: a tenant's audit log and occurrence ledger, newest first."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query
from pydantic import Field

from cronplane.api.auth import CanRead
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import EventPage, NameSegment
from cronplane.core.codec import to_document
from cronplane.events import Event

router = APIRouter(prefix="/tenants/{tenant}/events", tags=["events"])
Context = Annotated[ApiContext, Depends(current_context)]


def render_event(event: Event) -> dict[str, Any]:
    """An event as the API shows it."""
    return to_document(event)


@router.get("", response_model=EventPage, summary="A tenant's events")
def list_events(
    ctx: Context,
    _: CanRead,
    tenant: NameSegment,
    code: Annotated[
        list[Annotated[str, Field(pattern=r"^[XV]\d{6}[A-Z]{6}$")]] | None,
        Query(description="Only these codes (repeat the parameter)."),
    ] = None,
    schedule_id: UUID | None = None,
    before: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Changes with their actors and every occurrence's outcome; page with `before`."""
    rows = ctx.service.audit.list(
        tenant, codes=code, schedule_id=schedule_id, before_id=before, limit=limit
    )
    next_before = rows[-1].id if len(rows) == limit else None
    return {"items": [render_event(row) for row in rows], "next_before": next_before}
