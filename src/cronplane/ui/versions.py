"""A schedule's versions in the console (issue 38): every definition it had, two of them
side by side, and a roll back to any of them.

Routes (one service call each, guarded by its action):

    GET  /schedules/{stack}/{environment}/{name}/versions            Reader
         ?first=N&second=M: the two compared (default: the previous against the current)
    POST /schedules/{stack}/{environment}/{name}/versions/rollback   Updater
         form: to, revision; ScheduleService.rollback (the edit path: checks, revision,
         an override on an app row, a new version via rollback)
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Form, Path, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.model import Scope
from cronplane.errors import CronplaneError
from cronplane.ui.editor import KEY, schedule_url
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Session, Updater

router = page_router()
Segment = Annotated[str, Path(min_length=1, max_length=128)]
Number = Annotated[int | None, Query(ge=1, le=2**31 - 1)]
SHOWN = 100


def _page(
    request: Request,
    session: Session,
    scope: Scope,
    name: str,
    *,
    first: int | None = None,
    second: int | None = None,
    notice: str = "",
    error: CronplaneError | None = None,
    status_code: int = 200,
) -> Response:
    service = context_of(request).service
    schedule = service.get_schedule(scope, name)
    versions = service.list_versions(scope, name, limit=SHOWN)
    compared = None
    try:
        compared = service.diff_versions(scope, name, first, second)
    except CronplaneError as refused:  # an unknown number: the list still shows
        error = error or refused
        status_code = refused.status if status_code == 200 else status_code
    context: dict[str, Any] = {
        "session": session,
        "section": "schedules",
        "schedule": schedule,
        "versions": versions,
        "diff": compared,
        "notice": notice,
        "error": error_context(error),
        "url": schedule_url(schedule),
    }
    return render(request, "versions.html", context, status_code=status_code)


@router.get(KEY + "/versions")
def versions(
    request: Request,
    session: Reader,
    stack: Segment,
    environment: Segment,
    name: Segment,
    first: Number = None,
    second: Number = None,
    notice: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    """The versions, newest first, and two of them side by side."""
    scope = Scope(session.tenant, stack, environment)
    return _page(request, session, scope, name, first=first, second=second, notice=notice)


@router.post(KEY + "/versions/rollback")
def rollback(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    to: Annotated[int, Form(ge=1, le=2**31 - 1)],
    revision: Annotated[int | None, Form(ge=0)] = None,
    reason: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Make version `to`'s definition the row's again (refused with its code otherwise)."""
    scope = Scope(session.tenant, stack, environment)
    try:
        done = context_of(request).service.rollback_schedule(
            scope,
            name,
            to=to,
            actor=session.principal.actor,
            revision=revision,
            reason=reason.strip() or None,
        )
    except CronplaneError as error:
        return _page(request, session, scope, name, error=error, status_code=error.status)
    notice = f"Rolled back to version {to}: revision {done.schedule.revision} is now current."
    query = urlencode({"notice": notice})
    return RedirectResponse(schedule_url(done.schedule, "/versions") + "?" + query, status_code=303)
