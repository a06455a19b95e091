"""The Tenants page (platform tokens only): each tenant's usage against its quota, the
tenant a platform session manages, and (platform admins) each tenant's own quota.

Routes (one service call each, guarded by its action):

    GET  /tenants                  Tenant reader (a platform token)   ScheduleService.list_tenants
    POST /tenants/switch           Tenant reader                      (the session's tenant)
    POST /tenants/{tenant}/quota   Quota setter (a platform admin)    ScheduleService.set_quota

A tenant's token is refused with the coded 403 page (core.access.PLATFORM_ONLY).
A quota field left empty falls back to the platform's default (CRONPLANE_QUOTA_*).
"""

from __future__ import annotations

from typing import Annotated, Any, Final
from urllib.parse import urlencode

from fastapi import Depends, Form, Path, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.access import Action
from cronplane.core.quotas import QUOTA_FIELDS
from cronplane.core.validation import validate_name
from cronplane.errors import CronplaneError, InvalidRequest
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Session, authorizer, set_tenant

router = page_router()
TenantReader = Annotated[Session, Depends(authorizer(Action.TENANTS))]
QuotaSetter = Annotated[Session, Depends(authorizer(Action.QUOTA))]
Limit = Annotated[str, Form(max_length=12)]
QUOTA_LABELS: Final = {
    "max_schedules": "Schedules",
    "max_jobs": "Jobs",
    "min_interval": "Min interval (s)",
    "max_fires_per_minute": "Fires / minute",
    "max_queued": "Queued",
}


def share(used: int, limit: int | None) -> int | None:
    """Percent of a limit used (capped at 100 for the bar); None without a limit."""
    if limit is None:
        return None
    return 100 if limit == 0 else min(100, round(100 * used / limit))


def _page(
    request: Request,
    session: Session,
    *,
    notice: str = "",
    error: CronplaneError | None = None,
    status_code: int = 200,
) -> Response:
    rows = context_of(request).list_tenants()  # over shards: every shard's
    context: dict[str, Any] = {
        "session": session,
        "section": "tenants",
        "tenants": rows,
        "share": share,
        "notice": notice,
        "error": error_context(error),
        "quota_fields": QUOTA_LABELS,
    }
    return render(request, "tenants.html", context, status_code=status_code)


@router.get("/tenants")
def tenants(request: Request, session: TenantReader, reason: str = "") -> Response:
    """Schedules, jobs, fires in the last hour and queue depth per tenant, against quotas."""
    return _page(request, session, notice=reason[:200])


@router.post("/tenants/switch")
def switch_tenant(
    request: Request, session: TenantReader, tenant: Annotated[str, Form(max_length=64)] = ""
) -> Response:
    """Manage `tenant` from now on (a platform session); any valid name, so a new tenant
    can be set up before it holds anything."""
    try:
        chosen = validate_name(tenant.strip(), "tenant")
    except CronplaneError as error:
        return _page(request, session, error=error, status_code=error.status)
    response = RedirectResponse("/", status_code=303)
    set_tenant(response, request, chosen)
    return response


def _limits(values: dict[str, str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """Form texts → (limits to set, names to clear: the empty ones); InvalidRequest naming
    the field for anything but digits."""
    limits: dict[str, int] = {}
    clear: list[str] = []
    for name, text in values.items():
        text = text.strip()
        if not text:
            clear.append(name)
        elif text.isascii() and text.isdigit():
            limits[name] = int(text)
        else:
            raise InvalidRequest(
                f"quota {name} must be a whole number, or empty for the platform's default",
                {"field": name},
            )
    return limits, tuple(clear)


@router.post("/tenants/{tenant}/quota")
def set_quota(
    request: Request,
    session: QuotaSetter,
    tenant: Annotated[str, Path(min_length=1, max_length=64)],
    max_schedules: Limit = "",
    max_jobs: Limit = "",
    min_interval: Limit = "",
    max_fires_per_minute: Limit = "",
    max_queued: Limit = "",
) -> Response:
    """Set the tenant's own limits (empty: the platform's default); one event with the changes."""
    given = dict(
        zip(
            QUOTA_FIELDS,
            (max_schedules, max_jobs, min_interval, max_fires_per_minute, max_queued),
            strict=True,
        )
    )
    try:
        limits, clear = _limits(given)
        context_of(request).service_for(tenant).set_quota(
            tenant, limits, clear=clear, actor=session.principal.actor
        )
    except CronplaneError as error:
        return _page(request, session, error=error, status_code=error.status)
    notice = urlencode({"reason": f"Quota of {tenant} saved."})
    return RedirectResponse(f"/tenants?{notice}", status_code=303)
