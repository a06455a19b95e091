"""The PostgreSQL fire path: the batch's rows built in Python and written by COPY.

There the server's CPU, not Python, is the limit, and COPY is its cheapest
insert; the per-row loop (`_Rows.add`) is kept flat for that reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import Any, NamedTuple
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.core.firing import Outcome
from cronplane.ids import time_ordered_hexes
from cronplane.store import cancels
from cronplane.store.dialects import pg_bulk
from cronplane.store.dispatch import quotas, reads
from cronplane.store.dispatch.crash import crash_point
from cronplane.store.dispatch.fair import Fairness
from cronplane.store.dispatch.planner import (
    CLEAR_PAUSE,
    DISABLE,
    LEDGER,
    ROW_CHANGES,
    Plan,
    Planner,
    planner_key,
)
from cronplane.store.dispatch.reads import Due
from cronplane.store.dispatch.transaction import (
    ACTOR,
    EVENT_COLUMNS,
    EXCLUSIVE_OVERLAPS,
    ITEM_COLUMNS,
    BatchResult,
)
from cronplane.store.tables import events, queue_items, schedule_state, schedules

# Due rows decided per chunk of the items' COPY: big enough that each write
# is a few of psycopg's 32 KB sends, small enough that the server starts
# inserting soon after the batch is read.
_STREAM_CHUNK = 500
# A due row's strings that are written to items and events.
_WRITTEN_TEXT = ("tenant", "stack", "environment", "name", "job", "payload")


class _Lookups(NamedTuple):
    """What the batch's rows are decided by, besides the planner (read once a batch)."""

    rows: Sequence[Due]  # in schedule-id order, their written strings safe for COPY
    options: dict[tuple[str, str, str], Any]  # active jobs (tenant, stack, name) → options
    active: dict[str, int]  # schedule id → its items active (planner.QUEUED | RUNNING)
    over: Mapping[str, quotas.OverQuota]  # schedule id → past its tenant's quota


def fire_postgresql(
    conn: Connection, planner: Planner, limit: int, fairness: Fairness | None = None
) -> BatchResult:
    """The batch's rows built in Python, written by COPY (server CPU is PostgreSQL's limit).

    With `fairness`, the rows are shared across tenants (store.dispatch.fair).
    """
    rows = _select(conn, planner.now, limit, fairness)
    crash_point("after_select")
    result = BatchResult(selected=len(rows))
    if not rows:
        return result
    rows_out = _Rows(planner, len(rows), _look_up(conn, planner, rows))
    ledger_text = _write_items(conn, planner, rows_out)
    _report(result, planner, rows_out)
    crash_point("after_insert")
    _write_state(conn, planner)
    crash_point("after_update")
    with pg_bulk.pg_copy_stream(conn, events, EVENT_COLUMNS) as write:
        write("".join(ledger_text))
    crash_point("after_events")
    # The rare pauses ended with a policy: one per row of their plans (keys are ids).
    result.ended_pauses = [
        replace(plan.ended_pause, schedule_id=UUID(key))
        for plan in planner.plans.values()
        if plan.ended_pause is not None
        for key in plan.keys
    ]
    return result


def _select(conn: Connection, now: datetime, limit: int, fairness: Fairness | None) -> list[Due]:
    """The batch's due rows, locked and decoded: in next_run order, or shared across
    tenants when more than one has a due row."""
    tenants = reads.fair_tenants(conn, now, fairness)
    if not tenants:
        return reads.due_rows(conn, now, limit)
    assert fairness is not None  # fair_tenants names none without it
    return reads.fair_rows(conn, now, limit, fairness, tenants)


def _look_up(conn: Connection, planner: Planner, rows: list[Due]) -> _Lookups:
    """The rows' jobs, active items, calendars and quotas; the rows in write order."""
    options = reads.job_options(conn, {row.tenant for row in rows}, {row.job for row in rows})
    active = active_of(conn, [row.id for row in rows if row.overlap != "allow"])
    planner.preload(row.exclusion for row in rows)
    # In schedule-id order: the inserts into the indexes keyed by schedule id
    # (the unique occurrence key, the overlap index, the ledger's index) then
    # walk each index in order instead of landing on random pages.
    ordered = sorted(rows, key=attrgetter("id"))
    safe = _copy_safe(ordered)
    if safe is not ordered:
        # The rows' names are now COPY text: look their jobs up the same way.
        escape = pg_bulk.copy_escape
        options = {(escape(t), escape(s), escape(n)): v for (t, s, n), v in options.items()}
    over = quotas.NO_OVER
    limits = quotas.fire_limits(conn, planner.quotas)
    if limits is not None:
        over = _over_quota(conn, planner, limits, safe, options, active)
    return _Lookups(safe, options, active, over)


def _write_items(conn: Connection, planner: Planner, rows_out: _Rows) -> list[str]:
    """Decide the rows and COPY their items, chunk by chunk; the ledger's COPY text
    (made alongside, sent after the UPDATE)."""
    rows = rows_out.lookups.rows
    # `cancel_running`: the previous items go before the new ones are inserted,
    # so the rows that may cancel (their schedule has an item active) are
    # decided first; the rest are decided while their items stream out.
    active = rows_out.lookups.active
    cancelling = [row for row in rows if row.overlap == "cancel_running" and active.get(row.id)]
    if cancelling:
        rows_out.add(cancelling)
        chosen = {row.id for row in cancelling}
        rows = [row for row in rows if row.id not in chosen]
    cancels.cancel_schedules(conn, rows_out.cancelling, actor=ACTOR, now=planner.now)
    ledger_text = [pg_bulk.copy_text(rows_out.ledger)]
    with pg_bulk.pg_copy_stream(conn, queue_items, ITEM_COLUMNS) as write:
        write(pg_bulk.copy_text(rows_out.items))
        # The server inserts one chunk's items while the next chunk is decided.
        for start in range(0, len(rows), _STREAM_CHUNK):
            items, ledger = len(rows_out.items), len(rows_out.ledger)
            rows_out.add(rows[start : start + _STREAM_CHUNK])
            write(pg_bulk.copy_text(rows_out.items[items:]))
            ledger_text.append(pg_bulk.copy_text(rows_out.ledger[ledger:]))
    return ledger_text


def _report(result: BatchResult, planner: Planner, rows_out: _Rows) -> None:
    """The batch's counts per outcome, fired occurrences and (when asked) tenants."""
    for plan in planner.plans.values():
        result.counts[plan.decision.outcome] += plan.count
    result.fired_for = rows_out.fired_for
    result.by_tenant = lambda: _by_tenant(rows_out.ledger)
    result.coalesced = rows_out.coalesced


def _write_state(conn: Connection, planner: Planner) -> None:
    """One UPDATE of schedule_state per plan (a compare-and-set on the next_run read),
    and of `schedules` for a plan that disables or resumes its rows."""
    for plan in planner.plans.values():
        set_columns, extra = ROW_CHANGES[plan.decision.outcome]
        matched = pg_bulk.pg_update_in(
            conn,
            schedule_state,
            set_columns,
            plan.set_values,
            match=("next_run", plan.due_raw),
            key="id",
            keys=plan.keys,
            extra_set=extra,
        )
        # The rows are locked (or the whole database is), so the compare-and-set
        # cannot miss; if it ever did, roll the whole batch back.
        if matched != len(plan.keys):
            raise RuntimeError("schedule rows changed under a fire transaction")
        _update_schedules(conn, planner, plan)


def _update_schedules(conn: Connection, planner: Planner, plan: Plan) -> None:
    """The rare writes to `schedules` of a plan that disables or resumes its rows
    (their own statement: a plain fire writes only schedule_state). The rows
    are locked by the batch's select; the state's compare-and-set matched them."""
    if not plan.writes_schedules:
        return
    columns: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()
    assignments = [CLEAR_PAUSE] if plan.decision.resumes else []
    if plan.decision.disables:
        columns, values = ("updated_at",), (planner.now_param,)
        assignments.append(DISABLE)
    pg_bulk.pg_update_in(
        conn,
        schedules,
        columns,
        values,
        match=None,
        key="id",
        keys=plan.keys,
        extra_set=", ".join(assignments),
    )


def _over_quota(
    conn: Connection,
    planner: Planner,
    limits: quotas.FireLimits,
    rows: Sequence[Due],
    options: dict[tuple[str, str, str], Any],
    active: dict[str, int],
) -> dict[str, quotas.OverQuota]:
    """The firing rows (by id) past their tenant's budget (store.dispatch.quotas)."""
    budgets = limits.budgets(conn, {row.tenant for row in rows}, planner.now)
    if not budgets:
        return {}

    def firing() -> Iterator[tuple[str, str]]:
        for row in rows:
            if row.tenant in budgets:
                job_active = (row.tenant, row.stack, row.job) in options
                key = planner_key(row.inputs, active.get(row.id, 0), job_active)
                if planner.plan(key).decision.enqueues:
                    yield row.id, row.tenant

    return quotas.over_budget(firing(), budgets)


def _by_tenant(ledger: Sequence[tuple[Any, ...]]) -> dict[tuple[str, Outcome], int]:
    """(tenant, outcome) → rows, from the batch's ledger rows (code, tenant, …)."""
    outcomes = {code.text: outcome for outcome, (code, _message) in LEDGER.items()}
    counted: dict[tuple[str, Outcome], int] = {}
    for code, tenant, *_rest in ledger:
        outcome = outcomes.get(code)
        if outcome is not None:  # not a V200150SCHEND that follows a ledger row
            counted[tenant, outcome] = counted.get((tenant, outcome), 0) + 1
    return counted


def _copy_safe(rows: list[Due]) -> list[Due]:
    """PostgreSQL: the rows, with their written strings escaped for COPY if any needs it.

    One scan of the batch's strings; escaping (rare: a payload with a
    backslash) copies the rows.
    """
    fields = attrgetter(*_WRITTEN_TEXT)
    if not pg_bulk.needs_copy_escape("".join(chain.from_iterable(map(fields, rows)))):
        return rows
    escape = pg_bulk.copy_escape
    return [
        row._replace(
            tenant=escape(row.tenant),
            stack=escape(row.stack),
            environment=escape(row.environment),
            name=escape(row.name),
            job=escape(row.job),
            payload=escape(row.payload),
        )
        for row in rows
    ]


class _Rows:
    """PostgreSQL: a batch's item and event rows, as COPY text, built as they are decided."""

    def __init__(self, planner: Planner, count: int, lookups: _Lookups) -> None:
        self.planner = planner
        self.lookups = lookups
        # One ascending run for the whole batch (however many `add` calls):
        # the items' primary key is appended to at one place.
        self.item_ids = iter(time_ordered_hexes(planner.now, count))
        # Rows in the tables' column order (ITEM_COLUMNS, EVENT_COLUMNS), for COPY.
        self.items: list[tuple[Any, ...]] = []
        self.ledger: list[tuple[Any, ...]] = []
        self.fired_for: list[datetime] = []
        self.coalesced = 0
        self.cancelling: list[str] = []  # schedule ids whose previous items are cancelled

    def add(self, rows: Sequence[Due]) -> None:
        """Decide and encode due rows, one chunk of the batch per call: one flat loop
        over plain locals, as it runs once per fire (per-row method calls, attribute
        lookups and encoding were most of a batch's Python time)."""
        planner, lookups = self.planner, self.lookups
        now_value, zero, null = planner.now_value, planner.enc.int(0), planner.enc.null
        plans, plan_for, job_plan_for = planner.plans, planner.plan, planner.job_plan
        items, ledger, fired_for, item_ids = self.items, self.ledger, self.fired_for, self.item_ids
        options, active, over = lookups.options, lookups.active, lookups.over
        fire, ended, cancelling = Outcome.FIRE, ev.SCHEDULE_ENDED.text, self.cancelling
        for row in rows:
            sid, tenant, stack, environment = row.id, row.tenant, row.stack, row.environment
            job_key = (tenant, stack, row.job)
            job_options = options.get(job_key)
            key = planner_key(
                row.inputs, active.get(sid, 0), job_options is not None, over.get(sid)
            )
            plan = plans.get(key)
            if plan is None:
                plan = plan_for(key)
            plan.keys.append(row.row_key)
            item_id = null
            if plan.decision.outcome is fire:
                assert job_options is not None  # FIRE implies an active job
                priority, expires, attempts, timeout, limit = job_plan_for(job_key, job_options)
                item_id = next(item_ids)
                items.append(
                    (
                        item_id, tenant, stack, environment, row.job, row.payload, "schedule", sid,
                        plan.scheduled_for, priority, "queued", now_value, expires, zero, attempts,
                        now_value, now_value, timeout if row.timeout is None else str(row.timeout),
                        limit, "t" if row.overlap in EXCLUSIVE_OVERLAPS else "f",
                    )
                )  # fmt: skip
                if plan.decision.cancels:
                    cancelling.append(sid)
                fired_for.append(plan.decision.fire_at)
                self.coalesced += plan.decision.coalesced - 1
            ledger.append(
                (
                    plan.code, tenant, stack, environment, sid, row.name, item_id, ACTOR,
                    plan.message, plan.scheduled_for, now_value, now_value, plan.detail,
                )
            )  # fmt: skip
            if plan.end_message is not None:
                ledger.append(
                    (
                        ended, tenant, stack, environment, sid, row.name, null, ACTOR,
                        plan.end_message, plan.scheduled_for, now_value, now_value,
                        plan.end_detail,
                    )
                )  # fmt: skip


def active_of(conn: Connection, ids: Sequence[str]) -> dict[str, int]:
    """PostgreSQL: of the (text) schedule ids, those with an item queued or running.

    Each maps to planner.QUEUED | planner.RUNNING (1: one waits, 2: one runs).
    """
    if not ids:
        return {}
    sql = (
        "SELECT schedule_id::text, bit_or(CASE status WHEN 'queued' THEN 1 ELSE 2 END) "
        "FROM queue_items WHERE filed IN (false, true) AND status IN ('queued', 'running') "
        "AND schedule_id = ANY(CAST(%s AS uuid[])) GROUP BY schedule_id"
    )
    return {row[0]: int(row[1]) for row in conn.exec_driver_sql(sql, (pg_bulk.pg_array(ids),))}
