"""Schedule version routes (issue 38): list, one, diff, rollback, restore.

Reading needs READ; a rollback is an edit (UPDATE, honours `If-Match`); a
restore makes a row again (CREATE). Each route parses, makes one service call
and renders with the codec (`core.codec.to_document`). `reason` (a rollback's,
a restore's) is recorded on the version; any other change may give one in
the `X-Cronplane-Reason` header (api.origin).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response
from pydantic import Field

from cronplane.api.auth import CanCreate, CanRead, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.revisions import if_match
from cronplane.api.schedules import KEY, render
from cronplane.api.schemas import NameSegment, Request
from cronplane.core.codec import to_document
from cronplane.core.model import Scope

router = APIRouter(prefix="/tenants/{tenant}/schedules", tags=["schedules"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Revision = Annotated[int | None, Depends(if_match)]
Number = Annotated[int, Field(ge=1, le=2**31 - 1)]
Reason = Annotated[str, Field(max_length=500)] | None


class RollbackBody(Request):
    """Roll back to version `to`; `dry_run` answers the changes and writes nothing."""

    to: Number
    dry_run: bool = False
    reason: Reason = None


class RestoreBody(Request):
    """Why the row is restored (recorded on its version)."""

    reason: Reason = None


@router.get(KEY + "/versions", summary="A schedule's versions")
def list_versions(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    """Newest first; page with `before` (the last number answered)."""
    rows = ctx.service.list_versions(
        Scope(tenant, stack, environment), name, limit=limit, before=before
    )
    next_before = rows[-1].number if len(rows) == limit else None
    return {"items": [to_document(row) for row in rows], "next_before": next_before}


@router.get(KEY + "/versions/{number}", summary="One version of a schedule")
def get_version(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    number: Annotated[int, Path(ge=1, le=2**31 - 1)],
) -> dict[str, Any]:
    """The version's whole definition, who made it, when, how and why."""
    return to_document(ctx.service.get_version(Scope(tenant, stack, environment), name, number))


@router.get(KEY + "/diff", summary="Two versions of a schedule, field by field")
def diff_versions(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    first: Annotated[int | None, Query(alias="from", ge=1, le=2**31 - 1)] = None,
    second: Annotated[int | None, Query(alias="to", ge=1, le=2**31 - 1)] = None,
) -> dict[str, Any]:
    """`from` against `to` (default: the previous version against the current): the
    fields that differ, each cron's description and the next 5 runs of each."""
    shown = ctx.service.diff_versions(Scope(tenant, stack, environment), name, first, second)
    return to_document(shown)


@router.post(KEY + "/rollback", summary="Roll a schedule back to a version")
def rollback_schedule(
    ctx: Context,
    principal: CanUpdate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    revision: Revision,
    response: Response,
    body: Annotated[RollbackBody, Body()],
) -> dict[str, Any]:
    """A new version equal to `to`'s definition, made by the edit path (on an app row,
    an override). X409380VERJOB when its job is gone; nothing changes then."""
    done = ctx.service.rollback_schedule(
        Scope(tenant, stack, environment),
        name,
        to=body.to,
        actor=principal.actor,
        revision=revision,
        dry_run=body.dry_run,
        reason=body.reason,
    )
    return {**to_document(done), "schedule": render(done.schedule, response)}


@router.post(KEY + "/restore", status_code=201, summary="Restore a deleted schedule")
def restore_schedule(
    ctx: Context,
    principal: CanCreate,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    response: Response,
    body: Annotated[RestoreBody | None, Body()] = None,
) -> dict[str, Any]:
    """Recreate a row deleted within the version retention from its last version.
    X409381RSTDPL when the name is taken, X404381RSTNON when there is nothing to restore."""
    reason = None if body is None else body.reason
    schedule = ctx.service.restore_schedule(
        Scope(tenant, stack, environment), name, actor=principal.actor, reason=reason
    )
    return render(schedule, response)
