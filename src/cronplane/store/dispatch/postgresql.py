"""The PostgreSQL fire path: the batch's rows built in Python and written by COPY.

There the server's CPU, not Python, is the limit, and COPY is its cheapest
insert; the per-row loop (`_Rows.add`) is kept flat for that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import chain
from operator import itemgetter
from typing import Any
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
from cronplane.store.dispatch.transaction import (
    ACTOR,
    EVENT_COLUMNS,
    EXCLUSIVE_OVERLAPS,
    ITEM_COLUMNS,
    BatchResult,
)
from cronplane.store.tables import events, queue_items, schedule_state, schedules

# Positions in a due row (reads.DUE_FIELDS; Row attribute access costs more
# than indexing).
_ID, _TENANT, _JOB, _OVERLAP, _EXCLUSION = map(
    reads.DUE_FIELDS.index, ("id", "tenant", "job", "overlap", "exclusion")
)
# Due rows decided per chunk of the items' COPY: big enough that each write
# is a few of psycopg's 32 KB sends, small enough that the server starts
# inserting soon after the batch is read.
_STREAM_CHUNK = 500
# Its strings that are written to items and events.
_WRITTEN_TEXT = tuple(
    map(reads.DUE_FIELDS.index, ("tenant", "stack", "environment", "name", "job", "payload"))
)


def fire_postgresql(
    conn: Connection, planner: Planner, limit: int, fairness: Fairness | None = None
) -> BatchResult:
    """The batch's rows built in Python, written by COPY (server CPU is PostgreSQL's limit).

    With `fairness`, the rows are shared across tenants (store.dispatch.fair).
    """
    now = planner.now
    # Shared across tenants only when more than one has a due row.
    tenants = [] if fairness is None else reads.due_tenants(conn, now)
    if fairness is None or len(tenants) < 2:
        rows = conn.execute(reads.due_query(now, limit)).all()
    else:
        rows = reads.fair_rows(conn, now, limit, fairness, tenants)
    crash_point("after_select")
    result = BatchResult(selected=len(rows))
    if not rows:
        return result
    options = reads.job_options(conn, {row[_TENANT] for row in rows}, {row[_JOB] for row in rows})
    active = active_of(conn, [row[_ID] for row in rows if row[_OVERLAP] != "allow"])
    planner.preload(row[_EXCLUSION] for row in rows)
    rows_out = _Rows(planner, len(rows))
    # In schedule-id order: the inserts into the indexes keyed by schedule id
    # (the unique occurrence key, the overlap index, the ledger's index) then
    # walk each index in order instead of landing on random pages.
    ordered = sorted(rows, key=itemgetter(_ID))
    safe = _copy_safe(ordered)
    if safe is not ordered:
        # The rows' names are now COPY text: look their jobs up the same way.
        escape = pg_bulk.copy_escape
        options = {(escape(t), escape(s), escape(n)): v for (t, s, n), v in options.items()}
    over = quotas.NO_OVER
    limits = quotas.fire_limits(conn, planner.quotas)
    if limits is not None:
        over = _over_quota(conn, planner, limits, safe, options, active)
    # `cancel_running`: the previous items go before the new ones are inserted,
    # so the rows that may cancel (their schedule has an item active) are
    # decided first; the rest are decided while their items stream out.
    cancelling = [row for row in safe if row[_OVERLAP] == "cancel_running" and active.get(row[_ID])]
    if cancelling:
        rows_out.add(cancelling, options, active, over)
        chosen = {row[_ID] for row in cancelling}
        safe = [row for row in safe if row[_ID] not in chosen]
    cancels.cancel_schedules(conn, rows_out.cancelling, actor=ACTOR, now=now)
    # The ledger's COPY text is made alongside, sent after the UPDATE.
    ledger_text = [pg_bulk.copy_text(rows_out.ledger)]
    with pg_bulk.pg_copy_stream(conn, queue_items, ITEM_COLUMNS) as write:
        write(pg_bulk.copy_text(rows_out.items))
        # The server inserts one chunk's items while the next chunk is decided.
        for start in range(0, len(safe), _STREAM_CHUNK):
            items, ledger = len(rows_out.items), len(rows_out.ledger)
            rows_out.add(safe[start : start + _STREAM_CHUNK], options, active, over)
            write(pg_bulk.copy_text(rows_out.items[items:]))
            ledger_text.append(pg_bulk.copy_text(rows_out.ledger[ledger:]))
    for plan in planner.plans.values():
        result.counts[plan.decision.outcome] += plan.count
    result.fired_for = rows_out.fired_for
    result.by_tenant = lambda: _by_tenant(rows_out.ledger)
    result.coalesced = rows_out.coalesced
    crash_point("after_insert")
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
    rows: Sequence[Any],
    options: dict[tuple[str, str, str], Any],
    active: dict[Any, int],
) -> dict[Any, quotas.OverQuota]:
    """The firing rows (by id) past their tenant's budget (store.dispatch.quotas)."""
    budgets = limits.budgets(conn, {row[_TENANT] for row in rows}, planner.now)
    if not budgets:
        return {}

    def firing() -> Any:
        for sid, tenant, stack, _env, _name, job, _payload, _timeout, _key, *inputs in rows:
            if tenant in budgets:
                key = planner_key(
                    tuple(inputs), active.get(sid, 0), (tenant, stack, job) in options
                )
                if planner.plan(key).decision.enqueues:
                    yield sid, tenant

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


def _copy_safe(rows: Sequence[Any]) -> Sequence[Any]:
    """PostgreSQL: the rows, with their written strings escaped for COPY if any needs it.

    One scan of the batch's strings; escaping (rare: a payload with a
    backslash) copies the rows.
    """
    fields = itemgetter(*_WRITTEN_TEXT)
    if not pg_bulk.needs_copy_escape("".join(chain.from_iterable(map(fields, rows)))):
        return rows
    escape = pg_bulk.copy_escape
    return [
        tuple(escape(value) if n in _WRITTEN_TEXT else value for n, value in enumerate(row))
        for row in rows
    ]


class _Rows:
    """PostgreSQL: a batch's item and event rows, as COPY text, built as they are decided."""

    def __init__(self, planner: Planner, count: int) -> None:
        self.planner = planner
        # One ascending run for the whole batch (however many `add` calls):
        # the items' primary key is appended to at one place.
        self.item_ids = iter(time_ordered_hexes(planner.now, count))
        self.items: list[tuple[Any, ...]] = []
        self.ledger: list[tuple[Any, ...]] = []
        self.fired_for: list[datetime] = []
        self.coalesced = 0
        self.cancelling: list[str] = []  # schedule ids whose previous items are cancelled

    def add(
        self,
        rows: Sequence[Any],
        options: dict[tuple[str, str, str], Any],
        active: dict[Any, int],
        over: Mapping[Any, quotas.OverQuota],
    ) -> None:
        """Decide and encode due rows, one chunk of the batch per call (`over`: rows past
        their tenant's quota).

        Written as one flat loop over plain locals because it runs once per
        fire: per-row method calls, attribute lookups and encoding were most
        of a batch's Python time.
        """
        planner = self.planner
        now_value, zero, null = planner.now_value, planner.enc.int(0), planner.enc.null
        plans, plan_for, job_plan_for = planner.plans, planner.plan, planner.job_plan
        items, ledger, fired_for = self.items, self.ledger, self.fired_for
        item_ids = self.item_ids
        fire = Outcome.FIRE
        cancelling = self.cancelling
        overlap_at = _OVERLAP - len(reads.DueWritten._fields)
        ended = ev.SCHEDULE_ENDED.text
        # reads.DueWritten, then the decision inputs (reads.INPUT_FIELDS). Unpacked
        # in one step: slicing a Row costs several times more per row.
        for sid, tenant, stack, environment, name, job, payload, timeout, row_key, *inputs in rows:
            job_key = (tenant, stack, job)
            job_options = options.get(job_key)
            # The planner's key: the inputs, which items are active, whether the job is.
            key = planner_key(
                tuple(inputs), active.get(sid, 0), job_options is not None, over.get(sid)
            )
            plan = plans.get(key)
            if plan is None:
                plan = plan_for(key)
            plan.keys.append(row_key)
            item_id = null
            if plan.decision.outcome is fire:
                assert job_options is not None  # FIRE implies an active job
                priority, expires, max_attempts, job_timeout, limit = job_plan_for(
                    job_key, job_options
                )
                item_id = next(item_ids)
                exclusive = "t" if inputs[overlap_at] in EXCLUSIVE_OVERLAPS else "f"
                items.append(
                    (
                        item_id, tenant, stack, environment, job, payload, "schedule", sid,
                        plan.scheduled_for, priority, "queued", now_value, expires, zero,
                        max_attempts, now_value, now_value,
                        job_timeout if timeout is None else str(timeout), limit, exclusive,
                    )
                )  # fmt: skip
                if plan.decision.cancels:
                    cancelling.append(sid)
                fired_for.append(plan.decision.fire_at)
                self.coalesced += plan.decision.coalesced - 1
            ledger.append(
                (
                    plan.code, tenant, stack, environment, sid, name, item_id, ACTOR, plan.message,
                    plan.scheduled_for, now_value, now_value, plan.detail,
                )
            )  # fmt: skip
            if plan.end_message is not None:
                ledger.append(
                    (
                        ended, tenant, stack, environment, sid, name, null, ACTOR,
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
