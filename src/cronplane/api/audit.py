"""The audit export route (issue 38): a tenant's events oldest first, resumable.

`GET /tenants/{tenant}/audit?since=&until=&after=&kind=&limit=` needs READ (a
read-only token may export). It parses, makes one service call
(`AuditLog.export`, whose docstring says why a resumed export skips and repeats
nothing) and renders with the codec. The bounds and the kind are checked by the
service, so a bad one is X400382AUDINV here as in the CLI.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query

from cronplane.api.auth import CanRead
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import NUL_FREE, NameSegment, Response
from cronplane.core.audit import ALL, KINDS, MAX_CURSOR
from cronplane.core.codec import to_document
from cronplane.core.queries import MAX_PAGE

router = APIRouter(prefix="/tenants/{tenant}/audit", tags=["audit"])
Context = Annotated[ApiContext, Depends(current_context)]
WHEN = "An ISO 8601 instant (naive: UTC) or a duration ago: 90m, 24h, 7d, 2w."


class AuditRecordOut(Response):
    """One event as an export ships it; `id` is the cursor to resume after it."""

    id: int
    at: datetime
    kind: str
    code: str
    actor: str
    tenant: str
    stack: str | None
    environment: str | None
    schedule_id: UUID | None
    schedule_name: str | None
    job: str | None
    item_id: UUID | None
    scheduled_for: datetime | None
    message: str
    detail: dict[str, Any]


class AuditPageOut(Response):
    """Records oldest first; pass `next` as `after` for more (null: nothing more is
    ready now; resume later after the last record's `id`)."""

    records: list[AuditRecordOut]
    next: int | None


@router.get("", response_model=AuditPageOut, summary="Export a tenant's audit events")
def export_audit(
    ctx: Context,
    _: CanRead,
    tenant: NameSegment,
    since: Annotated[
        str | None, Query(max_length=64, description=WHEN, json_schema_extra=NUL_FREE)
    ] = None,
    until: Annotated[
        str | None,
        Query(max_length=64, description=WHEN + " Exclusive.", json_schema_extra=NUL_FREE),
    ] = None,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_CURSOR, description="The last record's id seen.")
    ] = None,
    kind: Annotated[
        str,
        Query(
            max_length=16,
            description="changes, runs, alerts, system or all (docs/api.md lists the codes).",
            json_schema_extra={"enum": [*KINDS, ALL]},
        ),
    ] = ALL,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = MAX_PAGE,
) -> dict[str, Any]:
    """Changes and runs oldest first from `since`; page with `after`."""
    page = ctx.service.export_audit(
        tenant, since=since, until=until, after=after, kind=kind, limit=limit
    )
    return to_document(page)
