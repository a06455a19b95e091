"""The Jobs page: the tenant's jobs, and the items that need a person (failed, expired, retrying).

Routes (each one service call, each guarded by its action):

    GET  /jobs                      Reader   jobs and the items in trouble
    POST /jobs                      Creator  ScheduleService.register_job (the form below the jobs)
    POST /items/{item_id}/retry     Runner   RunService.retry_item (a fresh manual copy)
    POST /items/{item_id}/cancel    Runner   RunService.cancel_item (queued: at once; running: asked to stop)

Retry applies to failed and expired items, Cancel to a queued item (one
waiting for its next attempt), as SPEC §7's statuses allow; the service
refuses anything else with a coded error, shown on the page. A job registered
here is the API's: a `command:` target needs a platform admin, a refusal keeps
the form as it was sent.
"""

from __future__ import annotations

from typing import Annotated, Any, Final
from urllib.parse import urlencode
from uuid import UUID

from fastapi import Depends, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.inputs import JobSpec
from cronplane.core.labels import parse_text
from cronplane.core.model import QueueItem
from cronplane.errors import CronplaneError
from cronplane.ui.form import json_object, posted_fields
from cronplane.ui.history import attempts_text, item_tone, retrying
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Creator, Reader, Runner, Session

router = page_router()
ITEMS_PER_STATUS: Final = 50
MAX_FIELD: Final = 16_384
Fields = Annotated[dict[str, str], Depends(posted_fields(MAX_FIELD))]


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
    request: Request,
    session: Session,
    *,
    notice: str = "",
    error: CronplaneError | None = None,
    form: dict[str, Any] | None = None,
) -> Response:
    """The page, with a notice, or a refusal and the form as it was sent."""
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
            "form": form or {"stack": "default", "payload": "{}", "options": "{}"},
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


@router.post("/jobs")
def register(request: Request, session: Creator, fields: Fields) -> Response:
    """Register a job in the form's stack (SPEC §4), as `cronplane job add` does."""
    try:
        spec = JobSpec(
            name=fields.get("name", ""),
            target=fields.get("target", ""),
            title=fields.get("title", ""),
            payload=json_object(fields.get("payload") or "{}", "payload"),
            options=json_object(fields.get("options") or "{}", "options"),
            labels=parse_text(fields.get("labels", "")),
        )
        job = context_of(request).service.register_job(
            session.tenant,
            fields.get("stack") or "default",
            spec,
            actor=session.principal.actor,
            principal=session.principal,
        )
    except CronplaneError as error:
        return jobs_page(request, session, error=error, form=fields)
    return _done(f"Registered job {job.name} in {job.stack} ({job.target}).")


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
