"""Tenant quotas at write time, and the platform admin's use cases over tenants.

Each write that adds to a counted limit judges it inside its own write
transaction, after `store.quotas.lock_tenant` (PostgreSQL: an advisory lock
per tenant; SQLite: writes are serialized already), so two creates racing
for the last free schedule cannot both commit. A refused write raises its
QuotaExceeded before anything is written (or rolls back what it wrote).
A limit only refuses growth: a tenant already over a lowered quota may
still change, disable or remove what it has.

The fire-time limits (max_fires_per_minute, max_queued) are also applied by
the dispatcher (store.dispatch.quotas); run now, retry and backfill are
refused here when they would take the queue past max_queued.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection

from cronplane import events
from cronplane.core import cron as cron_engine
from cronplane.core import validation
from cronplane.core.model import Scope
from cronplane.core.quotas import (
    EXEMPT_TENANTS,
    QUOTA_FIELDS,
    UNLIMITED,
    Quota,
    Usage,
    checked_limits,
    quota_change,
)
from cronplane.errors import (
    IntervalTooShort,
    IntervalUnderQuota,
    InvalidRequest,
    JobQuotaExceeded,
    QueueQuotaExceeded,
    QuotaExceeded,
    ScheduleQuotaExceeded,
)
from cronplane.service.base import ServiceBase, checked_scope, json_value
from cronplane.store import quotas as quota_store
from cronplane.store.events import append_event
from cronplane.store.tables import jobs, queue_items, schedules

# "Fires in the last hour", as the usage views show it.
USAGE_WINDOW = timedelta(hours=1)


def tenant_quota(conn: Connection, defaults: Quota, tenant: str) -> Quota:
    """The tenant's effective quota: the platform's defaults, overridden by its own row
    (none for the platform's own housekeeping tenant)."""
    if tenant in EXEMPT_TENANTS:
        return UNLIMITED
    return defaults.over(quota_store.override(conn, tenant))


def check_interval(cron: str, quota: Quota, platform_minimum: int, tenant: str) -> None:
    """A cron judged against the tenant's min_interval quota when it has one (replacing the
    platform's: IntervalUnderQuota), else the platform's minimum (IntervalTooShort)."""
    if quota.min_interval is None:
        if platform_minimum > 1:
            validation.check_min_interval(cron_engine.parse(cron), platform_minimum)
        return
    if quota.min_interval <= 1:
        return
    try:
        validation.check_min_interval(cron_engine.parse(cron), quota.min_interval)
    except IntervalTooShort as error:
        raise IntervalUnderQuota.of(
            tenant,
            "min_interval",
            quota.min_interval,
            f"cron {error.detail['cron']!r} can fire {error.detail['interval']} s apart",
            cron=error.detail["cron"],
            interval=error.detail["interval"],
        ) from None


@dataclass(frozen=True, slots=True)
class _Counted:
    """A limit on how many of something a tenant holds: its Quota field, count and refusal."""

    limit: str
    count: Callable[..., int]
    refusal: type[QuotaExceeded]
    noun: str
    held_as: str  # the refusal's detail key for the count


_SCHEDULES = _Counted(
    "max_schedules", quota_store.count_schedules, ScheduleQuotaExceeded, "schedule", "held"
)
_JOBS = _Counted("max_jobs", quota_store.count_jobs, JobQuotaExceeded, "job", "held")
_QUEUED = _Counted(
    "max_queued", quota_store.count_queued, QueueQuotaExceeded, "waiting item", "queued"
)


def _room(
    conn: Connection, tenant: str, quota: Quota, adding: int, counted: _Counted, **detail: Any
) -> int:
    """The tenant's count now (0 when unlimited); its refusal when `adding` more would pass
    the limit. The tenant's counted writes are locked first, so two cannot both pass."""
    limit: int | None = getattr(quota, counted.limit)
    if limit is None or adding <= 0:
        return 0
    quota_store.lock_tenant(conn, tenant)
    held = counted.count(conn, tenant, cap=limit + 1)
    if held + adding > limit:
        plural = "s" if adding != 1 else ""
        raise counted.refusal.of(
            tenant,
            counted.limit,
            limit,
            f"{adding} more {counted.noun}{plural} would make {held + adding}",
            **{counted.held_as: held},
            adding=adding,
            **detail,
        )
    return held


def room_for_schedules(
    conn: Connection, tenant: str, quota: Quota, adding: int, **detail: Any
) -> int:
    """The tenant's schedules now; ScheduleQuotaExceeded when `adding` more would pass
    max_schedules (locks the tenant's counted writes first)."""
    return _room(conn, tenant, quota, adding, _SCHEDULES, **detail)


def room_for_jobs(conn: Connection, tenant: str, quota: Quota, adding: int) -> None:
    """JobQuotaExceeded when `adding` more jobs would pass max_jobs (tenant locked first)."""
    _room(conn, tenant, quota, adding, _JOBS)


def room_in_queue(conn: Connection, tenant: str, quota: Quota, adding: int) -> None:
    """QueueQuotaExceeded (429) when `adding` more waiting items would pass max_queued."""
    _room(conn, tenant, quota, adding, _QUEUED)


class Tenants(ServiceBase):
    """The platform admin's view of tenants: usage against quotas, and setting quotas.
    The edges allow these to platform principals only."""

    def list_tenants(self) -> list[Usage]:
        """Every known tenant (a schedule, a job or a quota row), with usage and quota."""
        with self._read() as conn:
            names = [n for n in quota_store.known_tenants(conn) if n not in EXEMPT_TENANTS]
            return self._usages(conn, names, quota_store.overrides(conn))

    def tenant_usage(self, tenant: str) -> Usage:
        """One tenant's usage against its quota (a tenant with nothing is all zeros)."""
        validation.validate_name(tenant, "tenant")
        with self._read() as conn:
            own = quota_store.override(conn, tenant)
            [usage] = self._usages(conn, [tenant], {tenant: own})
            return usage

    def set_quota(
        self,
        tenant: str,
        limits: dict[str, Any],
        *,
        clear: tuple[str, ...] = (),
        actor: str,
    ) -> Usage:
        """Set the tenant's own limits (`limits`: name → whole number) and clear the named ones
        back to the platform's default; one event with the changes. Nothing already held is
        removed: a lowered limit refuses growth only."""
        checked_scope(Scope(tenant))
        if tenant in EXEMPT_TENANTS:
            raise InvalidRequest(
                f"{tenant!r} is the platform's own tenant: no quota applies to it",
                {"field": "tenant"},
            )
        given = checked_limits(quota_change(limits, clear))
        with self._write() as tx:
            before = quota_store.override(tx.conn, tenant)
            after = Quota(**{**before.to_dict(), **given})
            changes = {
                name: {"from": getattr(before, name), "to": getattr(after, name)}
                for name in QUOTA_FIELDS
                if getattr(before, name) != getattr(after, name)
            }
            if changes:
                quota_store.save(tx.conn, tenant, after, now=tx.now, actor=actor)
                append_event(
                    tx.conn,
                    events.TENANT_QUOTA_SET,
                    tenant=tenant,
                    actor=actor,
                    message=f"quota of tenant {tenant} set by {actor}: "
                    + ", ".join(f"{k}={json_value(v['to'])}" for k, v in changes.items()),
                    now=tx.now,
                    detail={"changes": changes},
                )
        return self.tenant_usage(tenant)

    def _usages(self, conn: Connection, names: list[str], own: Mapping[str, Quota]) -> list[Usage]:
        """`names`' usage against their effective quotas: one grouped count per measure."""
        since = self.clock.now() - USAGE_WINDOW
        count = quota_store.tenant_counts
        items = queue_items.c.tenant
        schedules_held = count(conn, schedules.c.tenant, names)
        jobs_held = count(conn, jobs.c.tenant, names)
        fired = count(conn, items, names, *quota_store.fired_since(since))
        queued = count(conn, items, names, *quota_store.QUEUED)
        usages = []
        for tenant in names:
            mine = own.get(tenant, Quota())
            quota = self.context.quotas.over(mine)
            if quota.min_interval is None and self.context.min_interval > 1:
                quota = Quota(**{**quota.to_dict(), "min_interval": self.context.min_interval})
            usages.append(
                Usage(
                    tenant,
                    schedules=schedules_held.get(tenant, 0),
                    jobs=jobs_held.get(tenant, 0),
                    fires_last_hour=fired.get(tenant, 0),
                    queued=queued.get(tenant, 0),
                    quota=quota,
                    overrides=mine,
                )
            )
        return usages
