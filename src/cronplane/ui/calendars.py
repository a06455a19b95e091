"""The Calendars page: the tenant's business calendars, saved and removed in place.

Routes (each one service call, each guarded by its action):

    GET  /calendars                 Reader    the calendars, who excludes them, a form
    POST /calendars                 Updater   Calendars.save_calendar (create or replace)
    POST /calendars/{name}/delete   Updater   Calendars.remove_calendar

A schedule names the calendars it excludes on its own page (Details: "Excluded
calendars", "On an excluded day"); docs/cron.md, "Business calendars".
"""

from __future__ import annotations

from typing import Annotated, Any, Final
from urllib.parse import urlencode

from fastapi import Depends, Path, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.calendars import ON_EXCLUDED_NOTES, WEEKDAYS
from cronplane.core.validation import comma_list
from cronplane.errors import CronplaneError
from cronplane.ui.form import posted_fields
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Session, Updater

router = page_router()
Segment = Annotated[str, Path(min_length=1, max_length=128)]
# A calendar's dates: up to core.calendars.MAX_DATES of them, comma separated.
MAX_FIELD: Final = 16_384


Fields = Annotated[dict[str, Any], Depends(posted_fields(MAX_FIELD, {"weekly": 7}))]


def calendars_page(
    request: Request,
    session: Session,
    *,
    notice: str = "",
    error: CronplaneError | None = None,
    form: dict[str, Any] | None = None,
) -> Response:
    """The page, with a notice, or a refusal and the form as it was sent."""
    service = context_of(request).service
    users = service.calendars.calendar_users(session.tenant)
    rows = [
        {**found, "schedules": users.get(found["name"], [])}
        for found in service.list_calendars(session.tenant)
    ]
    return render(
        request,
        "calendars.html",
        {
            "session": session,
            "section": "calendars",
            "calendars": rows,
            "weekdays": WEEKDAYS,
            "policies": ON_EXCLUDED_NOTES,
            "form": form or {"weekly": []},
            "notice": notice,
            "error": error_context(error),
        },
        status_code=error.status if error is not None else 200,
    )


@router.get("/calendars")
def calendars(
    request: Request, session: Reader, notice: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """Every calendar of the tenant with what it excludes and who excludes it."""
    return calendars_page(request, session, notice=notice)


@router.post("/calendars")
def save(request: Request, session: Updater, fields: Fields) -> Response:
    """Create a calendar, or replace the one of that name whole."""
    try:
        saved = context_of(request).service.save_calendar(
            session.tenant,
            fields.get("name", ""),
            weekly=fields["weekly"],
            dates=comma_list(fields.get("dates")),
            holidays=fields.get("holidays") or None,
            description=fields.get("description") or None,
            actor=session.principal.actor,
        )
    except CronplaneError as error:
        return calendars_page(request, session, error=error, form=fields)
    notice = f"Saved calendar {saved['name']} (revision {saved['revision']})."
    return RedirectResponse("/calendars?" + urlencode({"notice": notice}), status_code=303)


@router.post("/calendars/{name}/delete")
def remove(request: Request, session: Updater, name: Segment) -> Response:
    """Remove a calendar no schedule excludes."""
    try:
        context_of(request).service.remove_calendar(
            session.tenant, name, actor=session.principal.actor
        )
    except CronplaneError as error:
        return calendars_page(request, session, error=error)
    notice = f"Removed calendar {name}."
    return RedirectResponse("/calendars?" + urlencode({"notice": notice}), status_code=303)
