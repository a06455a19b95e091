"""What every route reaches: the database, the clock, the services and the limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from fastapi import Request

from cronplane.api.grouping import CreateGroups
from cronplane.clock import Clock
from cronplane.core.quotas import Usage
from cronplane.service import ScheduleService
from cronplane.service.shards import every_tenant
from cronplane.store.database import Database

# A whole manifest sync fits comfortably; one schedule's payload is limited to
# 64 KiB by the service, so this only bounds what is read before validation.
DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
# Deeper than any payload may be (32) plus the envelope around it.
DEFAULT_MAX_JSON_DEPTH: Final = 40


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a request may carry, checked before parsing."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH


@dataclass
class ApiContext:
    """The per-application state routes depend on (one per `create_app`)."""

    database: Database
    clock: Clock
    service: ScheduleService
    creates: CreateGroups
    limits: Limits = field(default_factory=Limits)
    on_change: Callable[[], None] | None = None
    # The bearer token /metrics requires (CRONPLANE_METRICS_TOKEN); None: public.
    metrics_token: str | None = None
    # Over shards (api.shard_router): every shard's service, for listings that span them.
    shard_services: Callable[[], list[ScheduleService]] | None = None
    # Over shards: the service of the shard a tenant lives on (a route whose tenant is
    # in its body, not its path, the router cannot send there).
    tenant_service: Callable[[str], ScheduleService] | None = None

    def service_for(self, tenant: str) -> ScheduleService:
        """The service holding `tenant`'s rows: this one, or over shards its shard's."""
        return self.service if self.tenant_service is None else self.tenant_service(tenant)

    def every_shard(self) -> list[ScheduleService]:
        """The services a platform listing reads: every shard's, or this one alone."""
        return [self.service] if self.shard_services is None else self.shard_services()

    def list_tenants(self) -> list[Usage]:
        """Every tenant's usage against its quota, on every shard, by name."""
        return every_tenant(self.every_shard())


def context_of(request: Request) -> ApiContext:
    """The ApiContext of the application serving `request` (a console page over shards:
    its tenant's, set by ui.session.for_tenant)."""
    ctx: ApiContext = getattr(request.state, "cronplane", None) or request.app.state.cronplane
    return ctx


async def current_context(request: Request) -> ApiContext:
    """`context_of` as a FastAPI dependency.

    Async (it does no I/O) so FastAPI runs it on the event loop instead of
    handing it to the thread pool: every route depends on it.
    """
    return context_of(request)
