"""Tenant routes for platform tokens: usage against quotas, and setting a tenant's quota.

A tenant's token gets 403 on every one of them (core.access.PLATFORM_ONLY),
whichever tenant the path names; reading needs a platform token with READ,
setting a quota a platform admin.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from cronplane.api.auth import CanSeeTenants, CanSetQuota
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import NameSegment
from cronplane.api.tenant_schemas import QuotaBody, TenantList, TenantOut
from cronplane.core.access import Principal

router = APIRouter(prefix="/tenants", tags=["tenants"])
Context = Annotated[ApiContext, Depends(current_context)]


@router.get("", response_model=TenantList, summary="List tenants with usage and quotas")
def list_tenants(ctx: Context, _: CanSeeTenants) -> dict[str, Any]:
    """Every tenant with a schedule, a job or a quota row: usage against its quota
    (over shards: on every shard, by name)."""
    found = {
        usage.tenant: usage for service in ctx.every_shard() for usage in service.list_tenants()
    }
    return {"items": [found[name].to_dict() for name in sorted(found)]}


@router.get("/{tenant}", response_model=TenantOut, summary="A tenant's usage and quota")
def show_tenant(ctx: Context, _: CanSeeTenants, tenant: NameSegment) -> dict[str, Any]:
    """Schedules, jobs, fires in the last hour and queue depth, against the quota."""
    return ctx.service.tenant_usage(tenant).to_dict()


@router.put("/{tenant}/quota", response_model=TenantOut, summary="Replace a tenant's quota")
def put_quota(
    ctx: Context, principal: CanSetQuota, tenant: NameSegment, body: QuotaBody
) -> dict[str, Any]:
    """Every limit as given; a limit left out (or null) returns to the platform's default."""
    return _set_quota(ctx, principal, tenant, body.model_dump())


@router.patch("/{tenant}/quota", response_model=TenantOut, summary="Change a tenant's quota")
def patch_quota(
    ctx: Context, principal: CanSetQuota, tenant: NameSegment, body: QuotaBody
) -> dict[str, Any]:
    """Only the limits given change; null clears one back to the platform's default."""
    return _set_quota(ctx, principal, tenant, body.model_dump(exclude_unset=True))


def _set_quota(
    ctx: ApiContext, principal: Principal, tenant: str, given: dict[str, Any]
) -> dict[str, Any]:
    """The body's limits set, its nulls cleared back to the platform's default."""
    limits = {name: value for name, value in given.items() if value is not None}
    clear = tuple(name for name, value in given.items() if value is None)
    return ctx.service.set_quota(tenant, limits, clear=clear, actor=principal.actor).to_dict()
