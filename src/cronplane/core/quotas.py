"""Tenant quotas: what one tenant may hold and fire, as values (docs/operations.md, Quotas).

A quota is five limits, each a whole number or None (no limit):

| limit                  | counted                                   | refused at / applied at         |
|------------------------|-------------------------------------------|---------------------------------|
| `max_schedules`        | the tenant's schedule rows                | create, sync (X403260QTASCH)    |
| `max_jobs`             | the tenant's job rows (active or not)     | register, install (X403261QTAJOB) |
| `min_interval`         | seconds between two fires of one schedule | create, update, sync (X403262QTAINT) |
| `max_fires_per_minute` | scheduled fires in one clock minute (UTC) | fire time: skipped (V200400SKPQTA) |
| `max_queued`           | the tenant's items waiting (`queued`)     | run now, retry, backfill (X429260QTAQUE); fire time: skipped |

The platform's defaults (settings `CRONPLANE_QUOTA_*`) apply to every tenant;
a tenant's own row overrides a limit it sets (a NULL column keeps the
default). Nothing here reads a database or a clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from cronplane.errors import InvalidRequest


@dataclass(frozen=True, slots=True)
class Quota:
    """A tenant's limits; None: unlimited (min_interval: the platform's minimum applies)."""

    max_schedules: int | None = None
    max_jobs: int | None = None
    min_interval: int | None = None
    max_fires_per_minute: int | None = None
    max_queued: int | None = None

    def over(self, override: Quota) -> Quota:
        """These limits with every limit `override` sets replacing ours."""
        given = {name: getattr(override, name) for name in QUOTA_FIELDS}
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    @property
    def limits_fires(self) -> bool:
        """Whether the fire path must count this tenant's fires (a fire-time limit is set)."""
        return self.max_fires_per_minute is not None or self.max_queued is not None

    def to_dict(self) -> dict[str, int | None]:
        """JSON-ready: every limit, None when unlimited."""
        return {name: getattr(self, name) for name in QUOTA_FIELDS}


# The platform's own housekeeping tenant (service.housekeeping.SYSTEM_TENANT, a test
# checks they agree): no quota applies to it, and it is not listed as a tenant.
EXEMPT_TENANTS: frozenset[str] = frozenset({"_system"})
# No limit at all (the platform's default when no CRONPLANE_QUOTA_* variable is set).
UNLIMITED = Quota()
QUOTA_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(Quota))
# Each limit's smallest value (0 schedules or jobs freezes a tenant; an interval is >= 1 s).
_MINIMUM = {"min_interval": 1}
# A limit above this is a typo, not a plan.
MAX_LIMIT = 1_000_000_000


def quota_change(limits: Mapping[str, Any], clear: Iterable[str]) -> dict[str, Any]:
    """Limits to set and names to clear as one change (name → value; None clears).

    InvalidRequest for a name both set and cleared: neither wins silently.
    """
    both = sorted(set(limits) & set(clear))
    if both:
        raise InvalidRequest(f"{both[0]} is both set and cleared", {"field": both[0]})
    return {**limits, **dict.fromkeys(clear)}


def checked_limits(values: Mapping[str, Any]) -> dict[str, int | None]:
    """Limits given by name → whole numbers >= their minimum (or None: clear);
    InvalidRequest naming the field otherwise, so nothing is written."""
    checked: dict[str, int | None] = {}
    for name, value in values.items():
        if name not in QUOTA_FIELDS:
            raise InvalidRequest(
                f"unknown quota {name!r}; one of {', '.join(QUOTA_FIELDS)}", {"field": name}
            )
        if value is None:
            checked[name] = None
            continue
        low = _MINIMUM.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_LIMIT:
            raise InvalidRequest(
                f"quota {name} must be a whole number from {low} to {MAX_LIMIT}, not {value!r}",
                {"field": name},
            )
        checked[name] = value
    return checked


@dataclass(frozen=True, slots=True)
class Usage:
    """What a tenant holds and fires now, beside its effective quota."""

    tenant: str
    schedules: int
    jobs: int
    fires_last_hour: int
    queued: int
    quota: Quota
    # The limits the tenant's own row sets (the rest are the platform's defaults).
    overrides: Quota

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "tenant": self.tenant,
            "usage": {
                "schedules": self.schedules,
                "jobs": self.jobs,
                "fires_last_hour": self.fires_last_hour,
                "queued": self.queued,
            },
            "quota": self.quota.to_dict(),
            "overrides": sorted(k for k, v in self.overrides.to_dict().items() if v is not None),
        }


def usage_from_dict(document: Mapping[str, Any]) -> Usage:
    """A Usage from its `to_dict` document (the API's answer)."""
    counts = document["usage"]
    own = set(document.get("overrides", ()))
    quota = Quota(**{name: document["quota"].get(name) for name in QUOTA_FIELDS})
    return Usage(
        document["tenant"],
        schedules=counts["schedules"],
        jobs=counts["jobs"],
        fires_last_hour=counts["fires_last_hour"],
        queued=counts["queued"],
        quota=quota,
        overrides=Quota(**{name: getattr(quota, name) for name in QUOTA_FIELDS if name in own}),
    )


@dataclass(frozen=True, slots=True)
class FireBudget:
    """How many more of a tenant's due rows one fire batch may fire, and which limit binds."""

    fires: int
    limit: str
    value: int


def fire_budget(quota: Quota, fired_this_minute: int, queued: int) -> FireBudget | None:
    """The tighter of the fire-time limits as a budget (>= 0); None when neither is set."""
    budgets = [
        FireBudget(max(0, value - used), name, value)
        for name, value, used in (
            ("max_fires_per_minute", quota.max_fires_per_minute, fired_this_minute),
            ("max_queued", quota.max_queued, queued),
        )
        if value is not None
    ]
    return min(budgets, key=lambda budget: budget.fires) if budgets else None
