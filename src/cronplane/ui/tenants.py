"""The Tenants page (platform tokens only): each tenant's usage against its quota.

Routes (one service call, guarded by its action):

    GET  /tenants    Tenant reader (a platform token)   ScheduleService.list_tenants

A tenant's token is refused with the coded 403 page (core.access.PLATFORM_ONLY).
Quotas are set with `cronplane tenant set-quota` or the API; this page shows them.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.access import Action
from cronplane.ui.pages import render
from cronplane.ui.route import page_router
from cronplane.ui.session import Session, authorizer

router = page_router()
TenantReader = Annotated[Session, Depends(authorizer(Action.TENANTS))]


def share(used: int, limit: int | None) -> int | None:
    """Percent of a limit used (capped at 100 for the bar); None without a limit."""
    if limit is None:
        return None
    return 100 if limit == 0 else min(100, round(100 * used / limit))


@router.get("/tenants")
def tenants(request: Request, session: TenantReader) -> Response:
    """Schedules, jobs, fires in the last hour and queue depth per tenant, against quotas."""
    rows = context_of(request).service.list_tenants()
    return render(
        request,
        "tenants.html",
        {"session": session, "section": "tenants", "tenants": rows, "share": share},
    )
