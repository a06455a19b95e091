"""Operational control routes (docs/controls.md): pause, resume, backfill a schedule.

Pause and resume need UPDATE and honour `If-Match` like enable/disable;
backfill needs RUN (it enqueues items, like run now). Each route parses, makes
one service call and renders.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Response

from cronplane.api.auth import CanRun, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.revisions import if_match
from cronplane.api.schedule_schemas import ScheduleOut
from cronplane.api.schedules import KEY, render
from cronplane.api.schemas import BackfillBody, BackfillOut, NameSegment, PauseBody, ResumeBody
from cronplane.core.model import Scope

router = APIRouter(prefix="/tenants/{tenant}/schedules", tags=["schedules"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Revision = Annotated[int | None, Depends(if_match)]


@router.post(KEY + "/pause", response_model=ScheduleOut, summary="Pause a schedule")
def pause_schedule(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
    body: Annotated[PauseBody | None, Body()] = None,
) -> dict[str, Any]:
    """Pause: each occurrence is recorded skipped-paused until `until` (if given) or a
    resume. `until` unparsable or not in the future answers 400 X400102UNTINV, as does
    `missed` without `until`; `missed` all over the backfill cap 400 X400104BKFCAP."""
    body = body or PauseBody()
    schedule = ctx.service.pause_schedule(
        Scope(tenant, stack, environment),
        name,
        actor=principal.actor,
        until=body.until,
        note=body.note,
        revision=revision,
        missed=body.missed,
    )
    return render(schedule, response)


@router.post(KEY + "/resume", response_model=ScheduleOut, summary="Resume a paused schedule")
def resume_schedule(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
    body: ResumeBody | None = None,
) -> dict[str, Any]:
    """End the pause; the next occurrence fires. `missed` says what the pause passed
    becomes: skipped (default), its latest occurrence or each one enqueued as a
    backfill (the backfill's cap and exactly-once rules). Not paused: unchanged."""
    missed = "skip" if body is None else body.missed
    schedule = ctx.service.resume_schedule(
        Scope(tenant, stack, environment),
        name,
        actor=principal.actor,
        revision=revision,
        missed=missed,
    )
    return render(schedule, response)


@router.post(KEY + "/backfill", response_model=BackfillOut, summary="Backfill a range")
def backfill_schedule(
    ctx: Context,
    principal: CanRun,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    body: BackfillBody,
) -> dict[str, Any]:
    """Enqueue one `backfill` item per occurrence in [from, to), in order, each once."""
    report = ctx.service.backfill_schedule(
        Scope(tenant, stack, environment),
        name,
        actor=principal.actor,
        start=body.start,
        end=body.end,
        dry_run=body.dry_run,
        allow_overlap=body.allow_overlap,
    )
    return report.to_dict()
