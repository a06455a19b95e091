"""Environment routes (issue 38): diff two environments of a tenant, promote one to another.

The diff needs READ; a promote creates and updates rows (never removes one), so it
needs CREATE and UPDATE: an editor's (`Action.PROMOTE`). Each route parses, makes
one service call and renders with the codec (`core.codec.to_document`); the rules
are service.promotion's. A promote given the diff's `token` is refused whole
(409 `X409382PRMCHG`) when a row moved since that diff.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import Field, StrictBool

from cronplane.api.auth import CanPromote, CanRead
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import MAX_NAME, NAME_SCHEMA, NameSegment, NameText, Request
from cronplane.core.codec import to_document
from cronplane.core.promotion import EnvironmentDiff
from cronplane.service import PromoteReport

router = APIRouter(prefix="/tenants/{tenant}/environments", tags=["environments"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
EnvName = Annotated[
    str, Query(min_length=1, max_length=MAX_NAME, json_schema_extra=dict(NAME_SCHEMA))
]
Reason = Annotated[str, Field(max_length=500)] | None
Token = Annotated[str, Field(min_length=1, max_length=100)] | None
# A name (`NAME` or `STACK/NAME`) a promote is limited to.
OnlyName = Annotated[str, Field(min_length=1, max_length=2 * MAX_NAME + 1)]


class PromoteBody(Request):
    """Apply `from_env`'s definitions to `to_env` (one stack, or every one); `only` limits
    it to these names (`name` or `stack/name`); `token` is the diff's."""

    from_env: NameText
    to_env: NameText
    stack: NameText | None = None
    only: Annotated[list[OnlyName], Field(max_length=10_000)] | None = None
    token: Token = None
    dry_run: StrictBool = False
    reason: Reason = None


def render_diff(diff: EnvironmentDiff) -> dict[str, Any]:
    """A diff as the API shows it: its document and the counts per status."""
    return {**to_document(diff), "summary": diff.summary()}


def render_promote(report: PromoteReport) -> dict[str, Any]:
    """A promote as the API shows it: its document and the counts."""
    return {**to_document(report), "summary": report.summary()}


@router.get("/diff", summary="Two environments' schedules, field by field")
def diff_environments(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    from_env: EnvName,
    to_env: EnvName,
    stack: Annotated[
        str | None, Query(min_length=1, max_length=MAX_NAME, json_schema_extra=dict(NAME_SCHEMA))
    ] = None,
) -> dict[str, Any]:
    """Each schedule of either environment (of `stack`, else every stack): only in the
    source, only in the target, differs (field by field, overrides marked), same, or a
    conflict; and the `token` to pass to a promote."""
    return render_diff(ctx.service.diff_environments(tenant, from_env, to_env, stack=stack))


@router.post("/promote", summary="Promote one environment's schedules to another")
def promote_environment(
    ctx: Context, principal: CanPromote, tenant: Segment, body: PromoteBody
) -> dict[str, Any]:
    """Create the target's missing schedules and update the differing ones, all or nothing;
    rows only in the target are left alone. `dry_run` answers the same and writes nothing."""
    report = ctx.service.promote_environment(
        tenant,
        body.from_env,
        body.to_env,
        actor=principal.actor,
        stack=body.stack,
        only=body.only,
        token=body.token,
        dry_run=body.dry_run,
        reason=body.reason,
    )
    return render_promote(report)
