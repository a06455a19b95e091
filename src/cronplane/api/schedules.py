"""Schedule routes: list, create, get, update, enable, disable, remove, history, preview, reset.

Every route is under `/tenants/{tenant}`; a schedule is addressed by its key
`{stack}/{environment}/{name}` (SPEC §2). Each route parses, makes one
service call and renders; the rules live in `cronplane.service`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response, status

from cronplane.api.auth import CanCreate, CanDelete, CanRead, CanToggle, CanUpdate
from cronplane.api.context import ApiContext, context_of, current_context
from cronplane.api.cron import preview
from cronplane.api.direct import DirectRoute
from cronplane.api.events import render_event
from cronplane.api.revisions import etag, if_match, set_etag
from cronplane.api.schedule_schemas import (
    ScheduleCreate,
    ScheduleOut,
    SchedulePage,
    SchedulePatchBody,
)
from cronplane.api.schemas import NO_NUL, EventPage, NameSegment, Preview, ScheduleQueryParams
from cronplane.core.codec import field_names
from cronplane.core.fields import NULLABLE_FIELDS
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Schedule, Scope
from cronplane.core.queries import MAX_SEARCH, ScheduleQuery, either_search
from cronplane.service import NewSchedule
from cronplane.service.calendars import shown_exclusion

router = APIRouter(prefix="/tenants/{tenant}/schedules", tags=["schedules"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Revision = Annotated[int | None, Depends(if_match)]
KEY = "/{stack}/{environment}/{name}"
SPEC_FIELDS = field_names(ScheduleSpec)


def render(schedule: Schedule, response: Response | None = None) -> dict[str, Any]:
    """A schedule as the API shows it (with its ETag when one row is answered)."""
    if response is not None:
        set_etag(response, schedule.revision)
    return schedule.to_dict()


_TIMES = (
    "last_run", "next_run", "created_at", "updated_at", "paused_at", "paused_until", "start_at",
    "end_at",
)  # fmt: skip


def schedule_json(schedule: Schedule) -> dict[str, Any]:
    """`render`'s body as the response model would serialize it (UTC as `Z`)."""
    row = schedule.to_dict()
    for key in _TIMES:
        value = row[key]
        if value is not None and value.endswith("+00:00"):
            row[key] = value[:-6] + "Z"
    return row


# Built once: `json.dumps` with options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_answer(
    body: dict[str, Any], status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON answer built here, not by the response model.

    For the two hot routes (create, list): FastAPI would validate the body
    against the model again (100 rows per page) before serializing it; the
    body is made from our own frozen records, so that second pass only
    costs. The OpenAPI schema still comes from `response_model`, and the API
    tests check that these answers match what the model path answers.
    """
    content = _ENCODER.encode(body).encode()
    return Response(content, status_code, headers, media_type="application/json")


@router.get("", response_model=SchedulePage, summary="List schedules (filters, cursor paging)")
def list_schedules(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    query: Annotated[ScheduleQueryParams, Query()],
    q: Annotated[str | None, Query(max_length=MAX_SEARCH, pattern=NO_NUL)] = None,
) -> Response:
    """Schedules ordered by (name, stack, environment); `next_cursor` null on the last page.

    `search` (or its short name `q`) keeps rows whose name, job, cron, stack,
    environment, job title or a label value contains it (any case); `selector`
    keeps the rows a label selector selects (`team=payments,env in (prod,staging)`).
    """
    filters = ScheduleQuery(**query.model_dump())
    filters = replace(filters, search=either_search(filters.search, q))
    page = ctx.service.list_schedules(tenant, filters)
    return json_answer(
        {"items": [schedule_json(row) for row in page.items], "next_cursor": page.next_cursor}
    )


async def create_schedule(
    request: Request, principal: CanCreate, tenant: Segment, body: ScheduleCreate
) -> Response:
    """Create a `user` schedule; every rule is checked before anything is written.

    Concurrent creates share a transaction (`cronplane.api.grouping`); each
    still gets its own answer, sent after the commit.
    """
    ctx = context_of(request)  # not a dependency: `DirectRoute` passes exactly these four
    spec = ScheduleSpec(**{name: getattr(body, name) for name in SPEC_FIELDS})
    scope = Scope(tenant, body.stack, body.environment)
    schedule = await ctx.creates.create(NewSchedule(scope, spec, principal.actor))
    location = f"/api/v1/tenants/{tenant}/schedules/{schedule.stack}/{schedule.environment}/{schedule.name}"
    return json_answer(
        schedule_json(schedule),
        status.HTTP_201_CREATED,
        {"Location": location, "ETag": etag(schedule.revision)},
    )


# Declared here (not by decorator) for its route class: a plainly valid create
# skips FastAPI's generic handling, anything else gets it (`cronplane.api.direct`).
router.add_api_route(
    "",
    create_schedule,
    methods=["POST"],
    response_model=ScheduleOut,
    status_code=status.HTTP_201_CREATED,
    summary="Create a schedule",
    route_class_override=DirectRoute,
)


@router.get(KEY, response_model=ScheduleOut, summary="Get a schedule")
def get_schedule(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    response: Response,
) -> dict[str, Any]:
    """One schedule by its key; its `ETag` is the revision to send back as `If-Match`."""
    return render(ctx.service.get_schedule(Scope(tenant, stack, environment), name), response)


@router.patch(KEY, response_model=ScheduleOut, summary="Update a schedule")
def update_schedule(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    body: SchedulePatchBody,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Change the fields given; `If-Match` with a stale revision answers 412."""
    # Absent and null both leave a field alone, except where the patch takes
    # None as a value (no misfire grace: "always fire once").
    given = body.model_dump(exclude_unset=True)
    patch = SchedulePatch(
        **{k: v for k, v in given.items() if v is not None or k in NULLABLE_FIELDS}
    )
    schedule = ctx.service.update_schedule(
        Scope(tenant, stack, environment), name, patch, actor=principal.actor, revision=revision
    )
    return render(schedule, response)


@router.post(KEY + "/enable", response_model=ScheduleOut, summary="Enable a schedule")
def enable_schedule(
    ctx: Context,
    principal: CanToggle,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Enable; `next_run` is computed forward from now (no back-fill)."""
    schedule = ctx.service.enable_schedule(
        Scope(tenant, stack, environment), name, actor=principal.actor, revision=revision
    )
    return render(schedule, response)


@router.post(KEY + "/disable", response_model=ScheduleOut, summary="Disable a schedule")
def disable_schedule(
    ctx: Context,
    principal: CanToggle,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Disable; `next_run` is cleared."""
    schedule = ctx.service.disable_schedule(
        Scope(tenant, stack, environment), name, actor=principal.actor, revision=revision
    )
    return render(schedule, response)


@router.delete(KEY, response_model=ScheduleOut, summary="Remove a schedule")
def remove_schedule(
    ctx: Context,
    principal: CanDelete,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
) -> dict[str, Any]:
    """Remove a `user` or `system` row (an `app` row answers 409 X409902APPOWN); returns it."""
    schedule = ctx.service.remove_schedule(
        Scope(tenant, stack, environment), name, actor=principal.actor, revision=revision
    )
    return render(schedule)


@router.post(KEY + "/reset", response_model=ScheduleOut, summary="Reset an app row to its manifest")
def reset_schedule(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Clear an `app` row's overrides and restore what its manifest declares."""
    schedule = ctx.service.reset_to_manifest(
        Scope(tenant, stack, environment), name, actor=principal.actor, revision=revision
    )
    return render(schedule, response)


@router.get(KEY + "/history", response_model=EventPage, summary="A schedule's events")
def schedule_history(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    before: Annotated[int | None, Query(ge=1, le=2**62)] = None,
) -> dict[str, Any]:
    """Changes and the occurrence ledger, newest first; page with `before`."""
    rows = ctx.service.schedule_history(
        Scope(tenant, stack, environment), name, limit=limit, before_id=before
    )
    next_before = rows[-1].id if len(rows) == limit else None
    return {"items": [render_event(row) for row in rows], "next_before": next_before}


@router.get(KEY + "/preview", response_model=Preview, summary="A schedule's next occurrences")
def preview_schedule(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    count: Annotated[int, Query(ge=1, le=100)] = 5,
    after: datetime | None = None,
) -> Preview:
    """The stored expression described, with its next `count` occurrences in its zone
    (none outside its active window, no more than its runs left)."""
    schedule = ctx.service.get_schedule(Scope(tenant, stack, environment), name)
    start = after or ctx.clock.now()
    return preview(
        schedule.cron,
        schedule.timezone,
        start,
        count,
        window=(schedule.start_at, schedule.end_at),
        runs_left=schedule.runs_left,
        dst=schedule.dst,
        exclusion=shown_exclusion(ctx.service, schedule),
    )
