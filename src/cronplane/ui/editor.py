"""Create and edit a schedule (tabs Details, Cron, Json, History), and its row actions.

Routes (each one service call, each guarded by its action):

    GET  /schedules/new                         Creator   the empty editor
    POST /schedules/new                         Creator   create_schedule
    GET  /schedules/{stack}/{environment}/{name}  Reader  the row's page: status, fields
                                                          read-only, history; an Edit link
    GET  .../edit                               Updater   the editor on the row
    POST /schedules/{stack}/{environment}/{name}  Updater update_schedule
    POST .../enable | .../disable               Toggler   enable / disable
    POST .../reset                              Updater   reset_to_manifest
    POST .../delete                             Deleter   remove_schedule

Pause, resume and backfill are `ui.controls`' routes on the same page.

A refusal re-renders the editor with the coded error in place, keeping what
was typed. Which fields are editable is shown from the same facts the
service enforces (the role's permissions; `core.edits.editable` per row source).
"""

from __future__ import annotations

import zoneinfo
from functools import lru_cache
from typing import Annotated, Any, Final
from urllib.parse import quote, urlencode

from fastapi import Depends, Path, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import ApiContext, context_of
from cronplane.core.access import Action
from cronplane.core.alerts import Watched
from cronplane.core.edits import editable, removable
from cronplane.core.fields import BY_NAME, OVERRIDABLE_FIELDS
from cronplane.core.model import Job, Schedule, Scope
from cronplane.errors import CronplaneError, JobNotFound
from cronplane.ui.form import DETAIL_FIELDS, ScheduleForm, read_form
from cronplane.ui.history import attempts_text, item_tone
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.runs import history
from cronplane.ui.session import Creator, Deleter, Reader, Session, Toggler, Updater
from cronplane.ui.timeline import marks, timeline_svg

router = page_router()

Segment = Annotated[str, Path(min_length=1, max_length=128)]
Form = Annotated[ScheduleForm, Depends(read_form)]
KEY: Final = "/schedules/{stack}/{environment}/{name}"
# A new row's editor also sets its key and status; a stored row's `enabled` has
# its own actions (enable, disable), not a form field.
NEW_ROW_FIELDS: Final = frozenset(("name", "environment", "status"))


@lru_cache(maxsize=1)
def zones() -> list[str]:
    """Every IANA zone name the zone selector offers, UTC first."""
    names = sorted(name for name in zoneinfo.available_timezones() if "/" in name)
    return ["UTC", *names]


def schedule_url(schedule: Schedule, suffix: str = "", **query: str) -> str:
    """The editor URL of a schedule (path segments quoted)."""
    parts = (schedule.stack, schedule.environment, schedule.name)
    path = "/schedules/" + "/".join(quote(part, safe="") for part in parts) + suffix
    return path + ("?" + urlencode(query) if query else "")


def editable_fields(session: Session, schedule: Schedule | None) -> frozenset[str]:
    """The fields this session's editor offers for change (the service decides again)."""
    if schedule is None:
        return (editable("user") - {"enabled"}) | NEW_ROW_FIELDS
    if not session.can(Action.UPDATE):
        return frozenset()
    return editable(schedule.source) - {"enabled"}


def _job_of(ctx: ApiContext, tenant: str, form: ScheduleForm) -> Job | None:
    if not (form.job and form.stack):
        return None
    try:
        return ctx.service.get_job(tenant, form.stack, form.job)
    except JobNotFound:
        return None


def _run_facts(ctx: ApiContext, schedule: Schedule | None) -> dict[str, Any]:
    """Whether the row ever fired and its newest item (its last outcome)."""
    if schedule is None:
        return {"fired": False, "last_item": None}
    runs = ctx.service.runs
    return {
        "fired": schedule.id in runs.fired_schedules(schedule.tenant, [schedule.id]),
        "last_item": runs.last_items(schedule.tenant, [schedule.id]).get(schedule.id),
    }


def editor_page(
    request: Request,
    session: Session,
    *,
    form: ScheduleForm,
    schedule: Schedule | None,
    error: CronplaneError | None = None,
    notice: str = "",
    tab: str = "details",
    editing: bool = True,
) -> Response:
    """The editor, for a new schedule (`schedule` None) or a stored one; with `editing`
    False, a stored row's own page: its status first, every field read-only, its
    history, and an Edit link when the role may change something (issue 39)."""
    ctx = context_of(request)
    jobs = ctx.service.list_jobs(session.tenant)
    scope = Scope(session.tenant, form.stack or "default", form.environment or "default")
    context: dict[str, Any] = {
        "session": session,
        "section": "schedules",
        "form": form,
        "schedule": schedule,
        "creating": schedule is None,
        "jobs": jobs,
        "job": _job_of(ctx, session.tenant, form),
        "zones": zones(),
        "detail_fields": DETAIL_FIELDS,
        "overridable": [BY_NAME[name].label.lower() for name in OVERRIDABLE_FIELDS],
        # What a stored row adds to a field's hint.
        "field_notes": {
            "jitter": f"This one fires {schedule.jitter_offset} s after each occurrence."
        }
        if schedule is not None and schedule.jitter
        else {},
        "editable": editable_fields(session, schedule) if editing else frozenset(),
        "editing": editing,
        "can_edit": bool(editable_fields(session, schedule)),
        "seed": scope.identity(form.name or form.job or "new"),
        "error": error_context(error),
        "notice": notice,
        "tab": tab
        if tab in ("details", "cron", "json", "history")[: 3 if editing else 4]
        else "details",
        "history": (shown := history(request, schedule.scope, schedule.name) if schedule else None),
        "timeline": timeline_svg(marks(shown)) if shown is not None else None,
        "alert_rules": ctx.service.alerts.list_rules(
            session.tenant,
            schedule=Watched(
                schedule.stack, schedule.environment, schedule.name, schedule.job, schedule.labels
            ),
        )
        if schedule
        else [],
        "open_alerts": ctx.service.alerts.open_counts(session.tenant, [schedule.id]).get(
            schedule.id, 0
        )
        if schedule
        else 0,
        "item_tone": item_tone,
        "attempts_text": attempts_text,
        "url": (lambda suffix="": schedule_url(schedule, suffix)) if schedule else None,
        **_run_facts(ctx, schedule),
        # Offer only what the service would accept: the edit policy is core.edits';
        # reset only has an app row's overrides to drop.
        "deletable": schedule is not None and session.can(Action.DELETE) and removable(schedule),
        "resettable": schedule is not None
        and session.can(Action.UPDATE)
        and schedule.source == "app"
        and bool(schedule.overrides),
    }
    return render(
        request, "editor.html", context, status_code=error.status if error is not None else 200
    )


def _tab_of(error: CronplaneError) -> str:
    field = error.detail.get("field")
    if field in ("cron", "expression", "timezone"):
        return "cron"
    if field == "payload":
        return "json"
    return "details"


@router.get("/schedules/new")
def new_schedule(request: Request, session: Creator) -> Response:
    """The empty editor."""
    return editor_page(request, session, form=ScheduleForm(), schedule=None)


@router.post("/schedules/new")
def create_schedule(request: Request, session: Creator, form: Form) -> Response:
    """Create a `user` schedule; a refusal re-shows the form with the coded error."""
    ctx = context_of(request)
    try:
        scope = Scope(session.tenant, form.stack, form.environment or "default")
        created = ctx.service.create_schedule(scope, form.spec(), actor=session.principal.actor)
    except CronplaneError as error:
        return editor_page(
            request, session, form=form, schedule=None, error=error, tab=_tab_of(error)
        )
    return RedirectResponse(schedule_url(created, notice="Schedule created."), status_code=303)


@router.get(KEY)
def edit_schedule(
    request: Request,
    session: Reader,
    stack: Segment,
    environment: Segment,
    name: Segment,
    notice: Annotated[str, Query(max_length=500)] = "",
    tab: Annotated[str, Query(max_length=16)] = "details",
) -> Response:
    """A stored schedule's page: status, fields read-only, history, its actions."""
    schedule = context_of(request).service.get_schedule(
        Scope(session.tenant, stack, environment), name
    )
    form = ScheduleForm.of(schedule)
    return editor_page(
        request, session, form=form, schedule=schedule, notice=notice, tab=tab, editing=False
    )


@router.get(KEY + "/edit")
def schedule_editor(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    tab: Annotated[str, Query(max_length=16)] = "details",
) -> Response:
    """The editor on a stored schedule (read-only where the source says so)."""
    schedule = context_of(request).service.get_schedule(
        Scope(session.tenant, stack, environment), name
    )
    return editor_page(request, session, form=ScheduleForm.of(schedule), schedule=schedule, tab=tab)


@router.post(KEY)
def save_schedule(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    form: Form,
) -> Response:
    """Save the editable fields (If-Match semantics: a stale revision is refused)."""
    service = context_of(request).service
    scope = Scope(session.tenant, stack, environment)
    schedule = service.get_schedule(scope, name)
    try:
        patch = form.patch(editable_fields(session, schedule))
        saved = service.update_schedule(
            scope, name, patch, actor=session.principal.actor, revision=form.revision_value()
        )
    except CronplaneError as error:
        kept = ScheduleForm.of(schedule).keeping(form, editable_fields(session, schedule))
        return editor_page(
            request, session, form=kept, schedule=schedule, error=error, tab=_tab_of(error)
        )
    return RedirectResponse(schedule_url(saved, notice="Saved."), status_code=303)


def _act(
    request: Request, session: Session, scope: Scope, name: str, verb: str, revision: str
) -> Response:
    service = context_of(request).service
    actor = session.principal.actor
    given = int(revision) if revision.isdigit() else None
    try:
        if verb == "enable":
            done = service.enable_schedule(scope, name, actor=actor, revision=given)
        elif verb == "disable":
            done = service.disable_schedule(scope, name, actor=actor, revision=given)
        elif verb == "reset":
            done = service.reset_to_manifest(scope, name, actor=actor, revision=given)
        else:
            removed = service.remove_schedule(scope, name, actor=actor, revision=given)
            return RedirectResponse(
                "/?" + urlencode({"notice": f"Schedule {removed.name} deleted."}), status_code=303
            )
    except CronplaneError as error:
        schedule = service.get_schedule(scope, name)
        form = ScheduleForm.of(schedule)
        return editor_page(
            request, session, form=form, schedule=schedule, error=error, editing=False
        )
    notices = {"enable": "Enabled.", "disable": "Disabled.", "reset": "Reset to the manifest."}
    return RedirectResponse(schedule_url(done, notice=notices[verb]), status_code=303)


async def _revision(request: Request) -> str:
    value = (await request.form()).get("revision")
    return value if isinstance(value, str) else ""


Revision = Annotated[str, Depends(_revision)]


@router.post(KEY + "/enable")
def enable(
    request: Request,
    session: Toggler,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
) -> Response:
    """Enable: next run computed forward from now."""
    return _act(
        request, session, Scope(session.tenant, stack, environment), name, "enable", revision
    )


@router.post(KEY + "/disable")
def disable(
    request: Request,
    session: Toggler,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
) -> Response:
    """Disable: next run cleared."""
    scope = Scope(session.tenant, stack, environment)
    return _act(request, session, scope, name, "disable", revision)


@router.post(KEY + "/reset")
def reset(
    request: Request,
    session: Updater,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
) -> Response:
    """Clear an app row's overrides."""
    return _act(
        request, session, Scope(session.tenant, stack, environment), name, "reset", revision
    )


@router.post(KEY + "/delete")
def delete(
    request: Request,
    session: Deleter,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
) -> Response:
    """Remove a user row (an app row is refused with X409902APPOWN, shown in place)."""
    return _act(
        request, session, Scope(session.tenant, stack, environment), name, "delete", revision
    )
