"""The SQLite fire path: the batch's writes as statements over temporary tables.

SQLite copies payloads and names itself (INSERT … SELECT, UPDATE … FROM);
Python only decides, once per distinct input (sqlite_plan.py). Also the
connection settings that path tunes, the checkpoint it defers to the end of a
burst is the dialect's (store.dialects.sqlite, `after_burst`).
"""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.core.model import PAUSE_FIELDS
from cronplane.ids import time_ordered_run
from cronplane.store import bulk, cancels
from cronplane.store.dispatch import reads
from cronplane.store.dispatch.crash import crash_point
from cronplane.store.dispatch.fair import Fairness, Offer, Taken, fill
from cronplane.store.dispatch.planner import Planner
from cronplane.store.dispatch.sqlite_plan import KEY_FIELDS, PlanRow, look_up, plan_groups
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
# One row per distinct inputs (sqlite_plan.PlanRow): what its rows' items, updates
# and events get. `ends`: the rows end (V200150SCHEND after their ledger event).
_FIRE_PLAN = (
    "CREATE TEMP TABLE IF NOT EXISTS fire_plan (inputs TEXT PRIMARY KEY, "
    "fires INTEGER NOT NULL, code TEXT, message TEXT, detail TEXT, scheduled_for TEXT, "
    "priority INTEGER, expires_at TEXT, max_attempts INTEGER, last_run TEXT, next_run TEXT, "
    "disables INTEGER NOT NULL, resumes INTEGER NOT NULL, timeout INTEGER, max_concurrency INTEGER, "
    "cancels INTEGER NOT NULL, ends INTEGER NOT NULL, end_message TEXT, end_detail TEXT) "
    "WITHOUT ROWID"
)
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
SELECT k, sk, next_run, json_array({", ".join(KEY_FIELDS)})
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


def fire_sqlite(
    conn: Connection, planner: Planner, limit: int, fairness: Fairness | None = None
) -> BatchResult:
    """The batch's rows copied and written by SQLite itself; Python decides once per group.

    Python reads one row per distinct decision input and job (not one per
    due row) and writes one plan row for each; every write is one INSERT …
    SELECT or UPDATE … FROM joining the due rows to their plan.
    """
    _prepare(conn)
    selected = _select(conn, planner.now_value, limit, fairness)
    crash_point("after_select")
    result = BatchResult(selected=selected)
    if not selected:
        return result
    groups, options, over = look_up(conn, planner)
    plan_rows, pauses = plan_groups(planner, groups, options, over, result)
    _write_items(conn, planner, selected, plan_rows)
    crash_point("after_insert")
    _write_state(conn, planner, selected)
    crash_point("after_update")
    _write_ledger(conn, planner)
    crash_point("after_events")
    if pauses:
        result.ended_pauses = _ended_pauses(conn, pauses)
    return result


def _prepare(conn: Connection) -> None:
    """This connection's settings for a fire, and its temporary tables, empty."""
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


def _select(conn: Connection, now: str, limit: int, fairness: Fairness | None) -> int:
    """Fill temp.fire_due with the batch's due rows (in next_run order, or shared across
    tenants when more than one has a due row); how many."""
    tenants = reads.fair_tenants(conn, now, fairness)
    if not tenants:
        return int(conn.exec_driver_sql(_SELECT_DUE_PLAIN, {"now": now, "limit": limit}).rowcount)
    assert fairness is not None  # fair_tenants names none without it
    _pick_fairly(conn, now, limit, fairness, tenants)
    return int(conn.exec_driver_sql(_SELECT_DUE_PICKED, {"now": now}).rowcount)


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
                picked.extend((k,) for k, _next_run in rows)
                last_k, last_next_run = rows[-1]
                taken[tenant] = (len(rows), (last_next_run, last_k))
        cursor.executemany("INSERT INTO temp.fire_pick (k) VALUES (?)", picked)
        return taken

    fill(limit, tenants, take, fairness)


def _write_items(
    conn: Connection, planner: Planner, selected: int, plan_rows: list[PlanRow]
) -> None:
    """The plan rows, the cancels of `cancel_running`, and the fired rows' items."""
    bulk.sqlite_insert(conn, "temp.fire_plan", PlanRow._fields, plan_rows)
    if any(plan.decision.cancels for plan in planner.plans.values()):
        cancelling = [sid for (sid,) in conn.exec_driver_sql(_CANCELLING)]
        cancels.cancel_schedules(conn, cancelling, actor=ACTOR, now=planner.now)
    ids = time_ordered_run(planner.now, selected)
    conn.exec_driver_sql(
        _INSERT_ITEMS, {"id_prefix": ids.prefix, "id_first": ids.first, "now": planner.now_value}
    )


def _write_state(conn: Connection, planner: Planner, selected: int) -> None:
    """schedule_state's compare-and-set for every due row; `schedules` where a plan needs it."""
    # The whole database is locked (BEGIN IMMEDIATE), so the compare-and-set
    # cannot miss; if it ever did, roll the whole batch back.
    if conn.exec_driver_sql(_UPDATE_STATE).rowcount != selected:
        raise RuntimeError("schedule rows changed under a fire transaction")
    if any(plan.writes_schedules for plan in planner.plans.values()):
        conn.exec_driver_sql(_UPDATE_SCHEDULES, {"now": planner.now_value})


def _write_ledger(conn: Connection, planner: Planner) -> None:
    """Every due row's ledger event, then a V200150SCHEND for each row that ends."""
    now = planner.now_value
    conn.exec_driver_sql(_INSERT_EVENTS, {"actor": ACTOR, "now": now})
    if any(plan.decision.ends for plan in planner.plans.values()):
        ended = {"code": ev.SCHEDULE_ENDED.text, "actor": ACTOR, "now": now}
        conn.exec_driver_sql(_INSERT_ENDED, ended)


def _ended_pauses(conn: Connection, ended: list[tuple[str, EndedPause]]) -> list[EndedPause]:
    """One EndedPause per due row of each plan row (its `inputs`) that ends a pause
    whose policy enqueues what it passed."""
    return [
        replace(pause, schedule_id=UUID(str(sid)))
        for inputs, pause in ended
        for (sid,) in conn.exec_driver_sql(_PLAN_ROW_IDS, {"inputs": inputs})
    ]
