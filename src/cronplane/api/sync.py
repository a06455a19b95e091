"""App routes: sync declared crons (dry-run or apply), install and uninstall apps (SPEC §5).

`POST /api/method/shc.schedule.sync` answers too, with the seed's body
(`stack`/`stackName`, `environment`, `crons`) and envelope (`{"message": …}`);
its tenant is the token's, or for a platform token the body's `tenant`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from cronplane.api.auth import CanSync, CanSyncBodyTenant
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import NameSegment
from cronplane.api.sync_schemas import (
    AppInstall,
    AppReportOut,
    CronEntry,
    SeedSyncBody,
    SeedSyncOut,
    SyncBody,
    SyncOut,
)
from cronplane.core.access import Action, Principal, check
from cronplane.core.inputs import CronDeclaration
from cronplane.core.model import Scope
from cronplane.core.reconcile import SyncPlan
from cronplane.errors import InvalidRequest
from cronplane.manifest import manifest_from_data
from cronplane.service import AppReport

router = APIRouter(prefix="/tenants/{tenant}", tags=["apps"])
seed_router = APIRouter(tags=["apps"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment


def declarations(stack: str, crons: Mapping[str, str | CronEntry]) -> dict[str, CronDeclaration]:
    """The crons map checked as a manifest's `crons:` (same rules, same InvalidManifest)."""
    document: dict[str, Any] = {
        name: value if isinstance(value, str) else value.model_dump(exclude_none=True)
        for name, value in crons.items()
    }
    return manifest_from_data({"name": stack, "crons": document}, source="crons").crons


def plan_document(plan: SyncPlan) -> dict[str, Any]:
    """The plan's own JSON, plus the declarations it creates or updates (clients render them)."""
    declared = {item.name: item.declared.to_dict() for item in plan.created}
    declared.update({item.name: item.declared.to_dict() for item in plan.updated})
    return {**plan.to_dict(), "declared": declared}


def render_plan(plan: SyncPlan, dry_run: bool) -> dict[str, Any]:
    """A sync plan as the API shows it."""
    return {"dry_run": dry_run, "plan": plan_document(plan), "summary": plan.summary()}


def render_report(report: AppReport) -> dict[str, Any]:
    """An app install or uninstall as the API shows it."""
    return {**report.to_dict(), "plan": plan_document(report.plan)}


@router.post("/sync", response_model=SyncOut, summary="Sync an app's declared crons")
def sync(ctx: Context, principal: CanSync, tenant: Segment, body: SyncBody) -> dict[str, Any]:
    """Reconcile the app rows of (stack, environment); `dry_run` plans without writing."""
    plan = ctx.service.sync(
        Scope(tenant, body.stack, body.environment),
        declarations(body.stack, body.crons),
        actor=principal.actor,
        dry_run=body.dry_run,
    )
    return render_plan(plan, body.dry_run)


@router.post("/apps", response_model=AppReportOut, summary="Install or upgrade an app")
def install_app(
    ctx: Context, principal: CanSync, tenant: Segment, body: AppInstall
) -> dict[str, Any]:
    """Register the manifest's jobs and sync its crons, in one transaction."""
    manifest = manifest_from_data(body.manifest, source="manifest")
    report = ctx.service.install_app(
        tenant,
        body.environment,
        manifest,
        actor=principal.actor,
        dry_run=body.dry_run,
        principal=principal,
    )
    return render_report(report)


@router.delete(
    "/apps/{stack}/{environment}", response_model=AppReportOut, summary="Uninstall an app"
)
def uninstall_app(
    ctx: Context,
    principal: CanSync,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    dry_run: Annotated[bool, Query()] = False,
) -> dict[str, Any]:
    """Remove the app's rows in this environment (its jobs are deactivated when none remain)."""
    report = ctx.service.uninstall_app(
        Scope(tenant, stack, environment), actor=principal.actor, dry_run=dry_run
    )
    return render_report(report)


@seed_router.post(
    "/api/method/shc.schedule.sync",
    response_model=SeedSyncOut,
    summary="Sync (the seed platform's path)",
)
def seed_sync(ctx: Context, principal: CanSyncBodyTenant, body: SeedSyncBody) -> dict[str, Any]:
    """The seed's `SyncApp(ctx, stackName, environment, crons)`; answers `{"message": plan}`."""
    tenant = _seed_tenant(principal, body.tenant)
    check(principal, tenant, Action.SYNC)
    plan = ctx.service_for(tenant).sync(
        Scope(tenant, body.stack, body.environment),
        declarations(body.stack, body.crons),
        actor=principal.actor,
        dry_run=body.dry_run,
    )
    return {"message": render_plan(plan, body.dry_run)}


def _seed_tenant(principal: Principal, given: str | None) -> str:
    if given is not None:
        return given
    if principal.tenant is None:
        raise InvalidRequest(
            'a platform token must name the tenant: add "tenant" to the body',
            {"field": "tenant"},
        )
    return principal.tenant
