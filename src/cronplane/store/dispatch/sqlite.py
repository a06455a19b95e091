"""The SQLite fire path: the batch's writes as statements over temporary tables.

SQLite copies payloads and names itself (INSERT … SELECT, UPDATE … FROM);
Python only decides, once per distinct input. Also the connection settings
that path tunes, the checkpoint it defers to the end of a burst is the dialect's
(store.dialects.sqlite, `after_burst`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.core.firing import Outcome
from cronplane.core.model import PAUSE_FIELDS
from cronplane.ids import time_ordered_run
from cronplane.store import bulk, cancels
from cronplane.store.dispatch import quotas, reads
from cronplane.store.dispatch.crash import crash_point
from cronplane.store.dispatch.fair import Fairness, Offer, Taken, fill
from cronplane.store.dispatch.planner import Planner, planner_key
from cronplane.store.dispatch.transaction import (
    ACTOR,
    EVENT_COLUMNS,
    EXCLUSIVE_OVERLAPS,
    ITEM_COLUMNS,
    BatchResult,
    EndedPause,
)
from cronplane.store.tables import STATE_FIELDS

SQLITE_CACHE_KIB = 64 * 1024
# WAL pages a fire connection lets accumulate before its commit checkpoints
# (SQLite's default is 1,000, about 4 MB): room for a burst of ~25,000 fires.
SQLITE_FIRE_CHECKPOINT_PAGES = 10_000


# The batch's due rows in schedule-id order (n counts them from 1): the rowids
# of its schedule_state row (k) and of its schedules row (sk), next_run as
# read, and `inputs`, the decision inputs and job as one JSON
# array, so rows that share them share one key (one text compare, where a
# sort or join on nine columns cost more than the rest of the statement).
# Temporary tables belong to this connection and take part in its transaction.
_FIRE_DUE = (
    "CREATE TEMP TABLE IF NOT EXISTS fire_due (n INTEGER PRIMARY KEY, k INTEGER NOT NULL, "
    "sk INTEGER NOT NULL, next_run TEXT NOT NULL, inputs TEXT NOT NULL)"
)
# One row per distinct inputs: what its rows' items, updates and events get.
_FIRE_PLAN_COLUMNS = (
    "inputs", "fires", "code", "message", "detail", "scheduled_for", "priority", "expires_at",
    "max_attempts", "last_run", "next_run", "disables", "resumes", "timeout", "max_concurrency",
    "cancels", "ends", "end_message", "end_detail",
)  # fmt: skip
# `ends`: the rows end (V200150SCHEND after their ledger event).
_FIRE_PLAN = (
    "CREATE TEMP TABLE IF NOT EXISTS fire_plan (inputs TEXT PRIMARY KEY, "
    "fires INTEGER NOT NULL, code TEXT, message TEXT, detail TEXT, scheduled_for TEXT, "
    "priority INTEGER, expires_at TEXT, max_attempts INTEGER, last_run TEXT, next_run TEXT, "
    "disables INTEGER NOT NULL, resumes INTEGER NOT NULL, timeout INTEGER, max_concurrency INTEGER, "
    "cancels INTEGER NOT NULL, ends INTEGER NOT NULL, end_message TEXT, end_detail TEXT) "
    "WITHOUT ROWID"
)
# What the json_array key holds: the decision inputs (reads.INPUT_FIELDS), then
# whether an item is active and the job's key.
_KEY_FIELDS = (*reads.INPUT_FIELDS, "active", "tenant", "stack", "job")
_INPUTS = len(reads.INPUT_FIELDS)
# The columns the due rows' select reads (the id orders them), each from the
# table that holds it: `st` schedule_state, `s` schedules.
_READ = dict.fromkeys(("id", "next_run", *reads.INPUT_FIELDS, "tenant", "stack", "job"))
_STATE_READ = frozenset(("id", *STATE_FIELDS))
_READ_SQL = ", ".join(
    f"{reads.DERIVED_INPUTS[name]} AS {name}"
    if name in reads.DERIVED_INPUTS
    else f"{'st' if name in _STATE_READ else 's'}.{name} AS {name}"
    for name in _READ
)
# A range scan of ix_schedule_state_due (`enabled = 1` matches its
# condition), each row's schedule by its key (CROSS JOIN: SQLite keeps the
# state first); the overlap rule is an index probe per row
# (ix_queue_items_schedule, both sections). `active` is planner.QUEUED |
# planner.RUNNING; `skip` needs only "any" (both bits), `allow` asks nothing.
_ANY = (
    "(SELECT 1 FROM queue_items AS q WHERE q.filed IN (0, 1) AND q.schedule_id = st.id "
    "AND q.status {})"
)
_SELECT_DUE = f"""
INSERT INTO temp.fire_due (k, sk, next_run, inputs)
SELECT k, sk, next_run, json_array({", ".join(_KEY_FIELDS)})
FROM (
    SELECT st.rowid AS k, s.rowid AS sk, {_READ_SQL},
        CASE s.overlap WHEN 'allow' THEN 0
            WHEN 'skip' THEN 3 * EXISTS {_ANY.format("IN ('queued', 'running')")}
            ELSE EXISTS {_ANY.format("= 'queued'")} + 2 * EXISTS {_ANY.format("= 'running'")}
        END AS active
    FROM schedule_state AS st CROSS JOIN schedules AS s ON s.id = st.id
    WHERE {{where}}
)
ORDER BY id
"""
_SELECT_DUE_PLAIN = _SELECT_DUE.format(
    where="st.enabled = 1 AND st.next_run <= :now ORDER BY st.next_run LIMIT :limit"
)
# Fair fill (store.dispatch.fair): the rows its rounds picked, by schedule_state rowid.
_FIRE_PICK = "CREATE TEMP TABLE IF NOT EXISTS fire_pick (k INTEGER PRIMARY KEY)"
_SELECT_DUE_PICKED = _SELECT_DUE.format(
    where="st.rowid IN (SELECT k FROM temp.fire_pick) AND st.enabled = 1 AND st.next_run <= :now"
)
# One tenant's earliest due rows after the keyset, by ix_schedule_state_tenant_due.
_PICK_TENANT = (
    "SELECT rowid, next_run FROM schedule_state WHERE enabled = 1 AND tenant = ? "
    "AND next_run <= ? AND (next_run, rowid) > (?, ?) ORDER BY next_run, rowid LIMIT ?"
)
_GROUPS = "SELECT inputs, count(*) FROM temp.fire_due GROUP BY inputs"
# CROSS JOIN: SQLite keeps this join order, so the due rows drive (in n order)
# and each finds its plan and schedule row by key; left to itself the planner
# may scan all of schedules to save the sort.
_ROWS = (
    "FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p CROSS JOIN schedules AS s "
    "WHERE p.inputs = d.inputs AND s.rowid = d.sk"
)
# `cancel_running`: the rows whose previous items are cancelled before the insert.
_CANCELLING = f"SELECT s.id {_ROWS} AND p.cancels"
# In schedule-id order, so the unfiled section of the index keyed by schedule
# id is walked in order; item ids count up with n, so the primary key is
# appended to. Unfiled (`filed` 0): the dispatcher files them after the burst
# (store.filing), as it does the ledger rows.
_INSERT_ITEMS = f"""
INSERT INTO queue_items ({", ".join(ITEM_COLUMNS)}, filed)
SELECT :id_prefix || printf('%015x', :id_first + d.n - 1),
    s.tenant, s.stack, s.environment, s.job, s.payload, 'schedule', s.id, p.scheduled_for,
    p.priority, 'queued', :now, p.expires_at, 0, p.max_attempts, :now, :now,
    coalesce(s.timeout, p.timeout), p.max_concurrency,
    s.overlap IN ({", ".join(f"'{o}'" for o in EXCLUSIVE_OVERLAPS)}), 0
{_ROWS} AND p.fires ORDER BY d.n
"""
# The compare-and-set on the next_run read: a row changed since is not matched.
_UPDATE_STATE = """
UPDATE schedule_state SET last_run = coalesce(p.last_run, schedule_state.last_run),
    next_run = p.next_run, run_count = schedule_state.run_count + p.fires,
    enabled = NOT p.disables
FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p
WHERE p.inputs = d.inputs AND schedule_state.rowid = d.k AND schedule_state.next_run = d.next_run
"""
# The rare writes to `schedules`, in their own statement run only when a plan
# needs them, so a plain fire writes only schedule_state: disabling (a
# definition change, so the revision moves on) and auto-resume (a pause whose
# until is reached).
_PAUSE_KEPT_OR_CLEARED = ", ".join(
    f"{name} = CASE WHEN p.resumes THEN NULL ELSE schedules.{name} END" for name in PAUSE_FIELDS
)
_UPDATE_SCHEDULES = f"""
UPDATE schedules SET revision = schedules.revision + p.disables,
    updated_at = CASE WHEN p.disables THEN :now ELSE schedules.updated_at END,
    {_PAUSE_KEPT_OR_CLEARED}
FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p
WHERE p.inputs = d.inputs AND schedules.rowid = d.sk AND (p.disables OR p.resumes)
"""
# A fire's event finds its item by the occurrence key.
_INSERT_EVENTS = f"""
INSERT INTO events ({", ".join(EVENT_COLUMNS)}, filed)
SELECT p.code, s.tenant, s.stack, s.environment, s.id, s.name, q.id, :actor, p.message,
    p.scheduled_for, :now, :now, p.detail, 0
FROM temp.fire_due AS d CROSS JOIN temp.fire_plan AS p CROSS JOIN schedules AS s
LEFT JOIN queue_items AS q ON p.fires AND q.schedule_id = s.id
    AND q.scheduled_for = p.scheduled_for
WHERE p.inputs = d.inputs AND s.rowid = d.sk ORDER BY d.n
"""
# The rows that end: one V200150SCHEND each, after their ledger event.
_INSERT_ENDED = f"""
INSERT INTO events ({", ".join(EVENT_COLUMNS)}, filed)
SELECT :code, s.tenant, s.stack, s.environment, s.id, s.name, NULL, :actor, p.end_message,
    p.scheduled_for, :now, :now, p.end_detail, 0
{_ROWS} AND p.ends ORDER BY d.n
"""

# The schedule ids of one plan row's due rows (a pause it ends with a policy).
_PLAN_ROW_IDS = (
    "SELECT s.id FROM temp.fire_due AS d CROSS JOIN schedules AS s "
    "WHERE s.rowid = d.sk AND d.inputs = :inputs ORDER BY d.n"
)


def _ended_pauses(conn: Connection, ended: list[tuple[str, EndedPause]]) -> list[EndedPause]:
    """One EndedPause per due row of each plan row (its `inputs`) that ends a pause
    whose policy enqueues what it passed."""
    return [
        replace(pause, schedule_id=UUID(str(sid)))
        for inputs, pause in ended
        for (sid,) in conn.exec_driver_sql(_PLAN_ROW_IDS, {"inputs": inputs})
    ]


def _mark_over_quota(
    conn: Connection,
    planner: Planner,
    limits: quotas.FireLimits,
    groups: Sequence[Any],
    decoded: list[list[Any]],
    options: dict[tuple[str, str, str], Any],
    over: dict[str, quotas.OverQuota],
) -> int:
    """Mark the batch's firing rows past their tenant's budget (store.dispatch.quotas);
    fill `over` (tenant → its binding limit); how many rows were marked."""
    budgets = limits.budgets(conn, {values[-3] for values in decoded}, planner.now)
    firing = []
    for (inputs, _count), values in zip(groups, decoded, strict=True):
        active, tenant, stack, job = values[_INPUTS:]
        if tenant not in budgets:
            continue
        key = planner_key(tuple(values[:_INPUTS]), int(active), (tenant, stack, job) in options)
        if planner.plan(key).decision.enqueues:
            firing.append(inputs)
    if not firing:
        return 0
    over.update((tenant, (b.limit, b.value)) for tenant, b in budgets.items())
    return quotas.mark_sqlite(conn, firing, budgets, _INPUTS + 1)


def _pick_fairly(
    conn: Connection, now: str, limit: int, fairness: Fairness, tenants: list[str]
) -> None:
    """Fill temp.fire_pick with up to `limit` due rows shared across tenants (fair.fill).

    A statement per offered tenant per round (SQLite runs them in-process:
    no round trip), each an index range of what it takes.
    """
    conn.exec_driver_sql(_FIRE_PICK)
    conn.exec_driver_sql("DELETE FROM temp.fire_pick")
    cursor = conn.connection.driver_connection
    assert cursor is not None

    def take(offer: Offer) -> Taken:
        taken: Taken = {}
        picked: list[tuple[int]] = []
        for tenant, (count, after) in offer.items():
            run, key = after or ("", 0)
            rows = cursor.execute(_PICK_TENANT, (tenant, now, run, key, count)).fetchall()
            if rows:
                picked.extend((row[0],) for row in rows)
                taken[tenant] = (len(rows), (rows[-1][1], rows[-1][0]))
        cursor.executemany("INSERT INTO temp.fire_pick (k) VALUES (?)", picked)
        return taken

    fill(limit, tenants, take, fairness)


def fire_sqlite(
    conn: Connection, planner: Planner, limit: int, fairness: Fairness | None = None
) -> BatchResult:
    """The batch's rows copied and written by SQLite itself; Python decides once per group.

    Python reads one row per distinct decision input and job (not one per
    due row) and writes one plan row for each; every write is one INSERT …
    SELECT or UPDATE … FROM joining the due rows to their plan.
    """
    # The indexes keyed by (random) schedule ids take a batch's inserts all
    # over, and SQLite's default 2 MB page cache turns a large batch into
    # page churn. A bigger cache for this connection only.
    conn.exec_driver_sql(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    # A checkpoint waits on fsync (60-90 ms here); at the default interval
    # every second commit of a burst ran one. The dispatcher checkpoints
    # once the burst is committed instead (`checkpoint`). Durability is
    # unchanged for a crashed process; after a power loss, WAL + NORMAL
    # can lose the commits since the last checkpoint, now up to this many
    # pages instead of 1,000.
    conn.exec_driver_sql(f"PRAGMA wal_autocheckpoint = {SQLITE_FIRE_CHECKPOINT_PAGES}")
    conn.exec_driver_sql(_FIRE_DUE)
    conn.exec_driver_sql(_FIRE_PLAN)
    # Emptied first, so n counts this batch's rows from 1 (the item ids' counter).
    conn.exec_driver_sql("DELETE FROM temp.fire_due")
    conn.exec_driver_sql("DELETE FROM temp.fire_plan")
    now = planner.now_value
    # Shared across tenants only when more than one has a due row.
    tenants = [] if fairness is None else reads.due_tenants(conn, now)
    if fairness is None or len(tenants) < 2:
        selected = conn.exec_driver_sql(_SELECT_DUE_PLAIN, {"now": now, "limit": limit}).rowcount
    else:
        _pick_fairly(conn, now, limit, fairness, tenants)
        selected = conn.exec_driver_sql(_SELECT_DUE_PICKED, {"now": now}).rowcount
    crash_point("after_select")
    result = BatchResult(selected=selected)
    if not selected:
        return result
    groups = conn.exec_driver_sql(_GROUPS).all()
    # Each group's key: _KEY_FIELDS.
    decoded = [json.loads(inputs) for inputs, _count in groups]
    options = reads.job_options(conn, {v[-3] for v in decoded}, {v[-1] for v in decoded})
    over: dict[str, quotas.OverQuota] = {}
    limits = quotas.fire_limits(conn, planner.quotas)
    if limits is not None and _mark_over_quota(
        conn, planner, limits, groups, decoded, options, over
    ):
        # The marked rows now group apart (their inputs start with quotas.MARK).
        groups = conn.exec_driver_sql(_GROUPS).all()
        decoded = [json.loads(inputs.removeprefix(quotas.MARK)) for inputs, _ in groups]
    plan_rows = []
    pauses: list[tuple[str, EndedPause]] = []
    by_tenant: dict[tuple[str, Outcome], int] = {}
    result.by_tenant = lambda: by_tenant
    for (inputs, count), values in zip(groups, decoded, strict=True):
        active, tenant, stack, job = values[_INPUTS:]
        job_key = (tenant, stack, job)
        job_options = options.get(job_key)
        marked = bool(over) and inputs.startswith(quotas.MARK)
        key = planner_key(
            tuple(values[:_INPUTS]),
            int(active),
            job_options is not None,
            over[tenant] if marked else None,
        )
        plan = planner.plan(key)
        decision = plan.decision
        result.counts[decision.outcome] += count
        tenant_key = (tenant, decision.outcome)
        by_tenant[tenant_key] = by_tenant.get(tenant_key, 0) + count
        # priority, expiry, attempts, timeout, max_concurrency
        item_options: tuple[Any, ...] = (None, None, None, None, None)
        if decision.enqueues:
            assert job_options is not None  # FIRE implies an active job
            item_options = planner.job_plan(job_key, job_options)
            result.fired_for.extend([decision.fire_at] * count)
            result.coalesced += (decision.coalesced - 1) * count
        if plan.ended_pause is not None:
            pauses.append((inputs, plan.ended_pause))
        priority, expires, attempts, timeout, max_concurrency = item_options
        plan_rows.append(
            (
                inputs, decision.enqueues, plan.code, plan.message, plan.detail,
                plan.scheduled_for, priority, expires, attempts, now if decision.enqueues else None,
                planner.enc.datetime(decision.next_run), decision.disables, decision.resumes, timeout,
                max_concurrency, decision.cancels, decision.ends, plan.end_message, plan.end_detail,
            )
        )  # fmt: skip
    bulk.sqlite_insert(conn, "temp.fire_plan", _FIRE_PLAN_COLUMNS, plan_rows)
    if any(plan.decision.cancels for plan in planner.plans.values()):
        cancelling = [row[0] for row in conn.exec_driver_sql(_CANCELLING)]
        cancels.cancel_schedules(conn, cancelling, actor=ACTOR, now=planner.now)
    ids = time_ordered_run(planner.now, selected)
    conn.exec_driver_sql(
        _INSERT_ITEMS, {"id_prefix": ids.prefix, "id_first": ids.first, "now": now}
    )
    crash_point("after_insert")
    # The whole database is locked (BEGIN IMMEDIATE), so the compare-and-set
    # cannot miss; if it ever did, roll the whole batch back.
    if conn.exec_driver_sql(_UPDATE_STATE).rowcount != selected:
        raise RuntimeError("schedule rows changed under a fire transaction")
    if any(plan.writes_schedules for plan in planner.plans.values()):
        conn.exec_driver_sql(_UPDATE_SCHEDULES, {"now": now})
    crash_point("after_update")
    conn.exec_driver_sql(_INSERT_EVENTS, {"actor": ACTOR, "now": now})
    if any(plan.decision.ends for plan in planner.plans.values()):
        ended = {"code": ev.SCHEDULE_ENDED.text, "actor": ACTOR, "now": now}
        conn.exec_driver_sql(_INSERT_ENDED, ended)
    crash_point("after_events")
    if pauses:
        result.ended_pauses = _ended_pauses(conn, pauses)
    return result
