"""Job routes: list, register, get, update, deactivate (SPEC §4).

A job is addressed by `{stack}/{name}` within the path's tenant.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response, status

from cronplane.api.auth import CanCreate, CanRead, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.revisions import if_match, set_etag
from cronplane.api.schemas import (
    MAX_NAME,
    NUL_FREE,
    JobCreate,
    JobList,
    JobOut,
    JobPatchBody,
    NameSegment,
)
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.model import Job
from cronplane.core.selectors import MAX_TEXT as MAX_SELECTOR
from cronplane.core.selectors import SELECTOR_REGEX

router = APIRouter(prefix="/tenants/{tenant}/jobs", tags=["jobs"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Revision = Annotated[int | None, Depends(if_match)]
KEY = "/{stack}/{name}"


def render(job: Job, response: Response | None = None) -> dict[str, Any]:
    """A job as the API shows it (with its ETag when one row is answered)."""
    if response is not None:
        set_etag(response, job.revision)
    return job.to_dict()


@router.get("", response_model=JobList, summary="List jobs")
def list_jobs(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Annotated[
        str | None, Query(min_length=1, max_length=MAX_NAME, json_schema_extra=NUL_FREE)
    ] = None,
    status: Annotated[str | None, Query(pattern="^(active|inactive)$")] = None,
    # A label selector (core.selectors), as the schedule listing's; the parser refuses.
    selector: Annotated[
        str | None, Query(max_length=MAX_SELECTOR, json_schema_extra={"pattern": SELECTOR_REGEX})
    ] = None,
) -> dict[str, Any]:
    """The tenant's jobs (optionally one stack, one status, the ones whose labels a
    selector selects: 400 X400007REQINV `detail.field` = `selector` when it does not
    parse), by stack and name."""
    rows = ctx.service.list_jobs(tenant, stack, status=status, selector=selector)
    return {"items": [job.to_dict() for job in rows]}


@router.post(
    "", response_model=JobOut, status_code=status.HTTP_201_CREATED, summary="Register a job"
)
def register_job(
    ctx: Context, principal: CanCreate, tenant: Segment, body: JobCreate, response: Response
) -> dict[str, Any]:
    """Register a job in (tenant, stack); 409 X409903JOBDPL when the name is taken."""
    spec = JobSpec(
        name=body.name,
        target=body.target,
        title=body.title,
        kind=body.kind,
        payload=body.payload,
        payload_schema=body.payload_schema,
        options=body.options,
        status=body.status,
        labels=body.labels,
    )
    job = ctx.service.register_job(
        tenant, body.stack, spec, actor=principal.actor, principal=principal
    )
    response.headers["Location"] = f"/api/v1/tenants/{tenant}/jobs/{job.stack}/{job.name}"
    return render(job, response)


@router.get(KEY, response_model=JobOut, summary="Get a job")
def get_job(
    ctx: Context, _: CanRead, tenant: Segment, stack: Segment, name: Segment, response: Response
) -> dict[str, Any]:
    """One job by (stack, name)."""
    return render(ctx.service.get_job(tenant, stack, name), response)


@router.patch(KEY, response_model=JobOut, summary="Update a job")
def update_job(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    body: JobPatchBody,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Change the fields given; `payload_schema: null` clears the schema."""
    given = {k: v for k, v in body.model_dump(exclude_unset=True).items() if v is not None}
    if "payload_schema" in body.model_fields_set:
        given["payload_schema"] = body.payload_schema
    job = ctx.service.update_job(
        tenant,
        stack,
        name,
        JobPatch(**given),
        actor=principal.actor,
        revision=revision,
        principal=principal,
    )
    return render(job, response)


@router.post(KEY + "/deactivate", response_model=JobOut, summary="Deactivate a job")
def deactivate_job(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
) -> dict[str, Any]:
    """Mark a job inactive: new schedules are refused, fires record X200901JOBMIS."""
    job = ctx.service.deactivate_job(
        tenant, stack, name, actor=principal.actor, revision=revision, principal=principal
    )
    return render(job, response)
