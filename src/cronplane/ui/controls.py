"""The schedule page's operational controls (docs/controls.md): pause, resume, backfill.

Routes (each one service call, guarded by its action):

    POST /schedules/{stack}/{environment}/{name}/pause     Updater  pause_schedule
    POST .../resume                                        Updater  resume_schedule
    POST .../backfill                                      Runner   backfill_schedule

A refusal re-renders the schedule page with the coded error in place; a
success redirects back to it with a notice (a dry run's notice lists the
occurrences it would enqueue).
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Depends, Path, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.model import Schedule, Scope
from cronplane.errors import CronplaneError
from cronplane.ui.editor import KEY, editor_page, schedule_url
from cronplane.ui.form import ScheduleForm, posted_fields
from cronplane.ui.pages import to_listing
from cronplane.ui.route import page_router
from cronplane.ui.session import Runner, Session, Updater

router = page_router()

Segment = Annotated[str, Path(min_length=1, max_length=128)]
MAX_FIELD: Final = 512
# A dry run's notice names at most this many occurrences.
SHOWN: Final = 5


Fields = Annotated[dict[str, str], Depends(posted_fields(MAX_FIELD))]


def _refused(
    request: Request, session: Session, scope: Scope, name: str, error: CronplaneError
) -> Response:
    schedule = context_of(request).service.get_schedule(scope, name)
    return editor_page(
        request, session, form=ScheduleForm.of(schedule), schedule=schedule, error=error
    )


def _after(fields: dict[str, str], done: Schedule, notice: str) -> Response:
    """Back to the listing the form came from (its `back`: a listing link), else the
    schedule's page, with the notice."""
    back = fields.get("back", "")
    if back.startswith("/?"):
        return to_listing(back, {"notice": notice})
    return RedirectResponse(schedule_url(done, notice=notice), status_code=303)


def _revision(fields: dict[str, str]) -> int | None:
    value = fields.get("revision", "")
    return int(value) if value.isdigit() else None


@router.post(KEY + "/pause")
def pause(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    fields: Fields,
) -> Response:
    """Pause with a note, an optional until (a datetime-local value: the row's zone) and,
    with the until, what the pause passed becomes when it ends by itself (`missed`;
    the select's empty default: not given, skip)."""
    scope = Scope(session.tenant, stack, environment)
    missed = fields.get("missed") or None
    try:
        done = context_of(request).service.pause_schedule(
            scope,
            name,
            actor=session.principal.actor,
            until=fields.get("until") or None,
            note=fields.get("note") or None,
            revision=_revision(fields),
            missed=missed,  # type: ignore[arg-type]  # checked by the service
        )
    except CronplaneError as error:
        return _refused(request, session, scope, name, error)
    notice = (
        "Paused." if missed is None else f"Paused; when it resumes by itself, missed: {missed}."
    )
    return _after(fields, done, f"{done.name}: {notice}" if fields.get("back") else notice)


@router.post(KEY + "/resume")
def resume(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    fields: Fields,
) -> Response:
    """Resume now: the next occurrence fires; what the pause passed is skipped, or (the
    form's `missed`) its latest occurrence or each one is enqueued as a backfill."""
    scope = Scope(session.tenant, stack, environment)
    missed = fields.get("missed") or "skip"
    try:
        done = context_of(request).service.resume_schedule(
            scope,
            name,
            actor=session.principal.actor,
            revision=_revision(fields),
            missed=missed,  # type: ignore[arg-type]  # checked by the service
        )
    except CronplaneError as error:
        return _refused(request, session, scope, name, error)
    notice = "Resumed." if missed == "skip" else f"Resumed; missed occurrences: {missed}."
    return _after(fields, done, f"{done.name}: {notice}" if fields.get("back") else notice)


@router.post(KEY + "/backfill")
def backfill(
    request: Request,
    session: Runner,
    stack: Segment,
    environment: Segment,
    name: Segment,
    fields: Fields,
) -> Response:
    """Enqueue (or, with dry_run, list) the occurrences in [from, to)."""
    scope = Scope(session.tenant, stack, environment)
    dry_run = fields.get("dry_run") == "on"
    try:
        report = context_of(request).service.backfill_schedule(
            scope,
            name,
            actor=session.principal.actor,
            start=fields.get("from", ""),
            end=fields.get("to", ""),
            dry_run=dry_run,
            allow_overlap=fields.get("allow_overlap") == "on",
        )
    except CronplaneError as error:
        return _refused(request, session, scope, name, error)
    enqueued, already = len(report.enqueued), len(report.already_fired)
    if dry_run:
        listed = ", ".join(at.isoformat() for at in report.enqueued[:SHOWN])
        more = f" and {enqueued - SHOWN} more" if enqueued > SHOWN else ""
        notice = f"Backfill would enqueue {enqueued}: {listed or 'nothing'}{more}."
    else:
        notice = f"Backfill enqueued {enqueued}."
    if already:
        notice += f" Already fired: {already}."
    schedule = context_of(request).service.get_schedule(scope, name)
    return RedirectResponse(schedule_url(schedule, notice=notice), status_code=303)
