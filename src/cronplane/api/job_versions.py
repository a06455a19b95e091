"""Job version routes (issue 38): list, one, diff, rollback — the schedule version
routes' (api/versions.py) under a job's path, `…/jobs/{stack}/{name}`.

Reading needs READ; a rollback is an edit (UPDATE, honours `If-Match`, and a
`command:` target is judged as an edit's). Each route parses, makes one
service call and renders with the codec; a target's URL credentials are
masked in every answer (core.job_versions.shown).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response

from cronplane.api.auth import CanRead, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.jobs import KEY, render
from cronplane.api.revisions import if_match
from cronplane.api.schemas import NameSegment
from cronplane.api.versions import RollbackBody
from cronplane.core.codec import to_document
from cronplane.core.validation import public_options

router = APIRouter(prefix="/tenants/{tenant}/jobs", tags=["jobs"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Revision = Annotated[int | None, Depends(if_match)]
NUMBER = {"ge": 1, "le": 2**31 - 1}


@router.get(KEY + "/versions", summary="A job's versions")
def list_job_versions(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before: Annotated[int | None, Query(**NUMBER)] = None,
) -> dict[str, Any]:
    """Newest first; page with `before` (the last number answered)."""
    rows = ctx.service.list_job_versions(tenant, stack, name, limit=limit, before=before)
    next_before = rows[-1].number if len(rows) == limit else None
    return {"items": [to_document(row) for row in rows], "next_before": next_before}


@router.get(KEY + "/versions/{number}", summary="One version of a job")
def get_job_version(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    number: Annotated[int, Path(**NUMBER)],
) -> dict[str, Any]:
    """The version's whole definition, who made it, when, how and why."""
    return to_document(ctx.service.get_job_version(tenant, stack, name, number))


@router.get(KEY + "/diff", summary="Two versions of a job, field by field")
def diff_job_versions(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    first: Annotated[int | None, Query(alias="from", **NUMBER)] = None,
    second: Annotated[int | None, Query(alias="to", **NUMBER)] = None,
) -> dict[str, Any]:
    """`from` against `to` (default: the previous version against the current): the
    fields that differ. X404384JVRNFD for a version the job does not have."""
    return to_document(ctx.service.diff_job_versions(tenant, stack, name, first, second))


@router.post(KEY + "/rollback", summary="Roll a job back to a version")
def rollback_job(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
    body: Annotated[RollbackBody, Body()],
) -> dict[str, Any]:
    """A new version equal to `to`'s definition, made by the edit path (`job` is the
    job after it, with its ETag); `dry_run` answers the changes and writes nothing."""
    done = ctx.service.rollback_job(
        tenant,
        stack,
        name,
        to=body.to,
        actor=principal.actor,
        revision=revision,
        dry_run=body.dry_run,
        reason=body.reason,
        principal=principal,
    )
    job = render(done.job, response)
    return {**to_document(done), "job": {**job, "options": public_options(done.job.options)}}
