"""A job's versions in the console (issue 38): every definition it had, two of them
side by side, and a roll back to any of them — the schedule Versions tab's
(ui/versions.py), kept small: the Jobs page links each job here.

Routes (one service call each, guarded by its action):

    GET  /jobs/{stack}/{name}/versions            Reader
         ?first=N&second=M: the two compared (default: the previous against the current)
    POST /jobs/{stack}/{name}/versions/rollback   Updater
         form: to, revision, reason; ScheduleService.rollback_job (the edit path)
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import Form, Path, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.errors import CronplaneError
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Session, Updater

router = page_router()
Segment = Annotated[str, Path(min_length=1, max_length=128)]
Number = Annotated[int | None, Query(ge=1, le=2**31 - 1)]
KEY = "/jobs/{stack}/{name}"
SHOWN = 100


def job_url(stack: str, name: str) -> str:
    """The job's Versions page."""
    return f"/jobs/{quote(stack, safe='')}/{quote(name, safe='')}/versions"


def _page(
    request: Request,
    session: Session,
    stack: str,
    name: str,
    *,
    first: int | None = None,
    second: int | None = None,
    notice: str = "",
    error: CronplaneError | None = None,
    status_code: int = 200,
) -> Response:
    service = context_of(request).service
    job = service.get_job(session.tenant, stack, name)
    versions = service.list_job_versions(session.tenant, stack, name, limit=SHOWN)
    compared = None
    try:
        compared = service.diff_job_versions(session.tenant, stack, name, first, second)
    except CronplaneError as refused:  # an unknown number: the list still shows
        error = error or refused
        status_code = refused.status if status_code == 200 else status_code
    context: dict[str, Any] = {
        "session": session,
        "section": "jobs",
        "job": job,
        "versions": versions,
        "diff": compared,
        "notice": notice,
        "error": error_context(error),
        "url": job_url(stack, name),
    }
    return render(request, "job_versions.html", context, status_code=status_code)


@router.get(KEY + "/versions")
def job_versions(
    request: Request,
    session: Reader,
    stack: Segment,
    name: Segment,
    first: Number = None,
    second: Number = None,
    notice: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    """The job's versions, newest first, and two of them side by side."""
    return _page(request, session, stack, name, first=first, second=second, notice=notice)


@router.post(KEY + "/versions/rollback")
def job_rollback(
    request: Request,
    session: Updater,
    stack: Segment,
    name: Segment,
    to: Annotated[int, Form(ge=1, le=2**31 - 1)],
    revision: Annotated[int | None, Form(ge=0)] = None,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Make version `to`'s definition the job's again (refused with its code otherwise)."""
    try:
        done = context_of(request).service.rollback_job(
            session.tenant,
            stack,
            name,
            to=to,
            actor=session.principal.actor,
            revision=revision,
            reason=reason.strip() or None,
            principal=session.principal,
        )
    except CronplaneError as error:
        return _page(request, session, stack, name, error=error, status_code=error.status)
    notice = f"Rolled back to version {to}: revision {done.job.revision} is now current."
    query = urlencode({"notice": notice})
    return RedirectResponse(job_url(stack, name) + "?" + query, status_code=303)
