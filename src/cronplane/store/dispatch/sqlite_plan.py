"""The SQLite fire path's plan step: the batch's groups (one per distinct decision
inputs and job in temp.fire_due) read and decoded once, the firing rows past
their tenant's quota marked (store.dispatch.quotas), and one temp.fire_plan
row planned for each group (sqlite.py writes them and joins the due rows to them).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from sqlalchemy import Connection

from cronplane.core.firing import Outcome
from cronplane.store.dispatch import quotas, reads
from cronplane.store.dispatch.planner import Plan, Planner, planner_key
from cronplane.store.dispatch.transaction import BatchResult, EndedPause

# What the json_array key holds: the decision inputs (reads.INPUT_FIELDS), then
# whether an item is active and the job's key (as Group has them).
KEY_FIELDS = (*reads.INPUT_FIELDS, "active", "tenant", "stack", "job")

_GROUPS = "SELECT inputs, count(*) FROM temp.fire_due GROUP BY inputs"


class PlanRow(NamedTuple):
    """A temp.fire_plan row: one per distinct inputs, what its rows' items, updates
    and events get (encoded)."""

    inputs: str
    fires: bool
    code: str
    message: str
    detail: Any
    scheduled_for: Any
    priority: Any
    expires_at: Any
    max_attempts: Any
    last_run: Any
    next_run: Any
    disables: bool
    resumes: bool
    timeout: Any
    max_concurrency: Any
    cancels: bool
    ends: bool
    end_message: str | None
    end_detail: Any


class Group(NamedTuple):
    """One distinct `inputs` of the batch's due rows (temp.fire_due), decoded once."""

    text: str  # the key as stored (prefixed with quotas.MARK past a quota)
    rows: int  # the due rows that share it
    inputs: tuple[Any, ...]  # their decision inputs (reads.INPUT_FIELDS)
    active: int  # planner.QUEUED | planner.RUNNING
    tenant: str
    stack: str
    job: str

    @property
    def job_key(self) -> tuple[str, str, str]:
        """(tenant, stack, name): what reads.job_options keys a job by."""
        return (self.tenant, self.stack, self.job)


def _groups(conn: Connection) -> list[Group]:
    """The batch's distinct inputs (temp.fire_due), each decoded once (KEY_FIELDS)."""
    groups = []
    for text, rows in conn.exec_driver_sql(_GROUPS):
        *inputs, active, tenant, stack, job = json.loads(text.removeprefix(quotas.MARK))
        groups.append(Group(text, rows, tuple(inputs), int(active), tenant, stack, job))
    return groups


def look_up(
    conn: Connection, planner: Planner
) -> tuple[list[Group], dict[tuple[str, str, str], Any], dict[str, quotas.OverQuota]]:
    """The batch's groups, their jobs' options, and the tenants past their quota (tenant →
    its binding limit), whose firing rows past it now group apart (marked)."""
    groups = _groups(conn)
    tenants, names = {g.tenant for g in groups}, {g.job for g in groups}
    options = reads.job_options(conn, tenants, names)
    over: dict[str, quotas.OverQuota] = {}
    limits = quotas.fire_limits(conn, planner.quotas)
    if limits is not None and _mark_over_quota(conn, planner, limits, groups, options, over):
        groups = _groups(conn)
    return groups, options, over


def _mark_over_quota(
    conn: Connection,
    planner: Planner,
    limits: quotas.FireLimits,
    groups: list[Group],
    options: dict[tuple[str, str, str], Any],
    over: dict[str, quotas.OverQuota],
) -> int:
    """Mark the batch's firing rows past their tenant's budget (store.dispatch.quotas);
    fill `over` (tenant → its binding limit); how many rows were marked."""
    budgets = limits.budgets(conn, {group.tenant for group in groups}, planner.now)
    firing = []
    for group in groups:
        if group.tenant not in budgets:
            continue
        key = planner_key(group.inputs, group.active, group.job_key in options)
        if planner.plan(key).decision.enqueues:
            firing.append(group.text)
    if not firing:
        return 0
    over.update((tenant, (b.limit, b.value)) for tenant, b in budgets.items())
    return quotas.mark_sqlite(conn, firing, budgets, KEY_FIELDS.index("tenant"))


def plan_groups(
    planner: Planner,
    groups: list[Group],
    options: dict[tuple[str, str, str], Any],
    over: dict[str, quotas.OverQuota],
    result: BatchResult,
) -> tuple[list[PlanRow], list[tuple[str, EndedPause]]]:
    """Each group's plan row, counted into `result`; the groups whose plan ends a pause
    whose policy enqueues what it passed (by their inputs)."""
    plan_rows = []
    pauses: list[tuple[str, EndedPause]] = []
    by_tenant: dict[tuple[str, Outcome], int] = {}
    result.by_tenant = lambda: by_tenant
    for group in groups:
        job_options = options.get(group.job_key)
        marked = bool(over) and group.text.startswith(quotas.MARK)
        key = planner_key(
            group.inputs,
            group.active,
            job_options is not None,
            over[group.tenant] if marked else None,
        )
        plan = planner.plan(key)
        decision = plan.decision
        result.counts[decision.outcome] += group.rows
        tenant_key = (group.tenant, decision.outcome)
        by_tenant[tenant_key] = by_tenant.get(tenant_key, 0) + group.rows
        if decision.enqueues:
            result.fired_for.extend([decision.fire_at] * group.rows)
            result.coalesced += (decision.coalesced - 1) * group.rows
        if plan.ended_pause is not None:
            pauses.append((group.text, plan.ended_pause))
        plan_rows.append(_plan_row(planner, group, plan, job_options))
    return plan_rows, pauses


def _plan_row(planner: Planner, group: Group, plan: Plan, job_options: Any) -> PlanRow:
    """The group's temp.fire_plan row: its plan, and its job's item options if it fires."""
    decision = plan.decision
    # priority, expiry, attempts, timeout, max_concurrency
    item_options: tuple[Any, ...] = (None, None, None, None, None)
    if decision.enqueues:
        assert job_options is not None  # FIRE implies an active job
        item_options = planner.job_plan(group.job_key, job_options)
    priority, expires, attempts, timeout, max_concurrency = item_options
    return PlanRow(
        inputs=group.text,
        fires=decision.enqueues,
        code=plan.code,
        message=plan.message,
        detail=plan.detail,
        scheduled_for=plan.scheduled_for,
        priority=priority,
        expires_at=expires,
        max_attempts=attempts,
        last_run=planner.now_value if decision.enqueues else None,
        next_run=planner.enc.datetime(decision.next_run),
        disables=decision.disables,
        resumes=decision.resumes,
        timeout=timeout,
        max_concurrency=max_concurrency,
        cancels=decision.cancels,
        ends=decision.ends,
        end_message=plan.end_message,
        end_detail=plan.end_detail,
    )
