"""Tenant fire-time quotas inside the fire transaction (core.quotas; docs/operations.md).

`max_fires_per_minute` and `max_queued` bound what the dispatcher enqueues
for one tenant. The rule: in each batch, the tenant's rows that would FIRE
are taken in schedule-id order (the order both paths write in); those
beyond its budget are decided SKIPPED_QUOTA instead (next_run advances, a
V200400SKPQTA event names the limit and its value, no item, not a run).
The budget is the tighter of `max_fires_per_minute` minus the tenant's
scheduled fires since the start of this clock minute (UTC) and `max_queued`
minus its waiting items; a new minute brings a fresh budget.

Cost: with no fire-time quota anywhere (the default) a batch pays one
lookup, the rows of tenant_quotas that set one (none). Otherwise, per
batch and per tenant of the batch that has one: a per-tenant lock
(PostgreSQL advisory; parallel lanes cannot both spend one budget), two
counts each stopped at its limit, and one ranking of the batch's firing
rows (SQLite: one window-function UPDATE over the batch's temporary table;
PostgreSQL: a pass over the rows already in Python).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from cronplane.core.quotas import EXEMPT_TENANTS, FireBudget, Quota, fire_budget
from cronplane.store import quotas as quota_store

# What a row over its tenant's budget adds to its decision key: (limit, value).
OverQuota = tuple[str, int]
NO_OVER: Mapping[Any, OverQuota] = {}


@dataclass(frozen=True, slots=True)
class FireLimits:
    """The platform's defaults and the tenants' own fire-time limits, for one batch."""

    defaults: Quota
    own: Mapping[str, Quota]

    def budgets(
        self, conn: Connection, tenants: Iterable[str], now: datetime
    ) -> dict[str, FireBudget]:
        """Each tenant of the batch that has a fire-time limit → its budget now (locked first,
        in name order, so two lanes cannot deadlock)."""
        minute = now.replace(second=0, microsecond=0)
        found: dict[str, FireBudget] = {}
        for tenant in sorted(set(tenants) - EXEMPT_TENANTS):
            quota = self.defaults.over(self.own[tenant]) if tenant in self.own else self.defaults
            if not quota.limits_fires:
                continue
            quota_store.lock_tenant(conn, tenant)
            per_minute, queued_limit = quota.max_fires_per_minute, quota.max_queued
            fired = (
                0
                if per_minute is None
                else quota_store.count_fires(conn, tenant, minute, cap=per_minute)
            )
            queued = (
                0
                if queued_limit is None
                else quota_store.count_queued(conn, tenant, cap=queued_limit)
            )
            budget = fire_budget(quota, fired, queued)
            if budget is not None:
                found[tenant] = budget
        return found


def fire_limits(conn: Connection, defaults: Quota) -> FireLimits | None:
    """The batch's fire-time limits; None (nothing more to do) when no tenant has one."""
    own = quota_store.fire_overrides(conn)
    if not own and not defaults.limits_fires:
        return None
    return FireLimits(defaults, own)


def over_budget(
    firing: Iterable[tuple[Any, str]], budgets: Mapping[str, FireBudget]
) -> dict[Any, OverQuota]:
    """Of the firing rows (key, tenant), in order, those past their tenant's budget →
    (limit, value). PostgreSQL's ranking (SQLite ranks in SQL: `mark_sqlite`)."""
    left = {tenant: budget.fires for tenant, budget in budgets.items()}
    over: dict[Any, OverQuota] = {}
    for key, tenant in firing:
        if tenant not in left:
            continue
        if left[tenant] > 0:
            left[tenant] -= 1
        else:
            budget = budgets[tenant]
            over[key] = (budget.limit, budget.value)
    return over


# SQLite: the batch's firing rows past their tenant's budget get their inputs key
# prefixed with `Q` (MARK), so they group into plans of their own.
MARK = "Q"
_MARK_SQLITE = f"""
UPDATE temp.fire_due SET inputs = '{MARK}' || inputs WHERE n IN (
    SELECT n FROM (
        SELECT d.n, b.value AS budget,
            row_number() OVER (PARTITION BY b.key ORDER BY d.n) AS rank
        FROM temp.fire_due AS d JOIN json_each(:budgets) AS b
            ON b.key = json_extract(d.inputs, :tenant_path)
        WHERE d.inputs IN (SELECT value FROM json_each(:firing))
    ) WHERE rank > budget
)
"""


def mark_sqlite(
    conn: Connection, firing: list[str], budgets: Mapping[str, FireBudget], tenant_at: int
) -> int:
    """SQLite: prefix MARK to the inputs of the firing rows (their inputs keys in `firing`)
    past their tenant's budget, ranked by n; how many were marked."""
    marked = conn.exec_driver_sql(
        _MARK_SQLITE,
        {
            "budgets": json.dumps({tenant: b.fires for tenant, b in budgets.items()}),
            "firing": json.dumps(firing),
            "tenant_path": f"$[{tenant_at}]",
        },
    ).rowcount
    return int(marked)
