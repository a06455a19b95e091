"""The Jobs page: the tenant's jobs, and the items that need a person (failed, expired, retrying).

Routes (each one service call, each guarded by its action):

    GET  /jobs                      Reader   jobs and the items in trouble
    POST /items/{item_id}/retry     Runner   RunService.retry_item (a fresh manual copy)
    POST /items/{item_id}/cancel    Runner   RunService.cancel_item (queued: at once; running: asked to stop)

Retry applies to failed and expired items, Cancel to a queued item (one
waiting for its next attempt), as SPEC §7's statuses allow; the service
refuses anything else with a coded error, shown on the page.
"""

from __future__ import annotations

from typing import Annotated, Final
from urllib.parse import urlencode
from uuid import UUID

from fastapi import Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.model import QueueItem
from cronplane.errors import CronplaneError
from cronplane.ui.history import attempts_text, item_tone, retrying
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Runner, Session

router = page_router()
ITEMS_PER_STATUS: Final = 50


def troubled_items(request: Request, tenant: str) -> list[QueueItem]:
    """Running, failed and expired items, and queued ones after a failed attempt; newest first."""
    runs = context_of(request).service.runs
    found = [
        *runs.list_items(tenant, status="running", limit=ITEMS_PER_STATUS),
        *runs.list_items(tenant, status="failed", limit=ITEMS_PER_STATUS),
        *runs.list_items(tenant, status="expired", limit=ITEMS_PER_STATUS),
        *[item for item in runs.list_items(tenant, status="queued") if retrying(item)],
    ]
    return sorted(found, key=lambda item: item.updated_at, reverse=True)


def jobs_page(
    request: Request, session: Session, *, notice: str = "", error: CronplaneError | None = None
) -> Response:
    """The page, with a notice or a refusal in place."""
    service = context_of(request).service
    return render(
        request,
        "jobs.html",
        {
            "session": session,
            "section": "jobs",
            "jobs": service.list_jobs(session.tenant),
            "items": troubled_items(request, session.tenant),
            "item_tone": item_tone,
            "retrying": retrying,
            "attempts_text": attempts_text,
            "notice": notice,
            "error": error_context(error),
        },
        status_code=error.status if error is not None else 200,
    )


@router.get("/jobs")
def jobs(
    request: Request, session: Reader, notice: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """The tenant's jobs and the items that failed, expired or wait to retry."""
    return jobs_page(request, session, notice=notice)


def _done(notice: str) -> Response:
    return RedirectResponse("/jobs?" + urlencode({"notice": notice}), status_code=303)


@router.post("/items/{item_id}/retry")
def retry(request: Request, session: Runner, item_id: UUID) -> Response:
    """Enqueue a fresh copy of a failed or expired item."""
    try:
        item = context_of(request).service.runs.retry_item(
            session.tenant, item_id, actor=session.principal.actor
        )
    except CronplaneError as error:
        return jobs_page(request, session, error=error)
    return _done(f"Retry queued: item …{str(item.id)[-8:]} ({item.job}).")


@router.post("/items/{item_id}/cancel")
def cancel(request: Request, session: Runner, item_id: UUID) -> Response:
    """Cancel a queued item; ask a running one to stop (its worker stops it)."""
    try:
        item = context_of(request).service.runs.cancel_item(
            session.tenant, item_id, actor=session.principal.actor
        )
    except CronplaneError as error:
        return jobs_page(request, session, error=error)
    if item.status == "running":
        return _done(
            f"Stop requested: item …{str(item.id)[-8:]} ({item.job}); its worker stops it."
        )
    return _done(f"Cancelled: item …{str(item.id)[-8:]} ({item.job}).")
