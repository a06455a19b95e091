"""The SQL of dispatch: the due-row scan and the fire transaction, batched.

One call of :func:`fire_batch` is one transaction holding up to `limit`
fires. Its steps, in order (each followed by a crash point, see
:func:`crash_point`)::

    fence     SELECT leases … WHERE holder, term current and unexpired FOR SHARE
              (shared by the leader's lanes, waited for by a takeover) → else Fenced, roll back
    select    due rows by ix_schedule_state_due (enabled AND next_run <= now), each
              with its schedules row, locked (FOR UPDATE OF both SKIP LOCKED on
              PostgreSQL; BEGIN IMMEDIATE on SQLite);
              when the round cannot take every due row, shared across tenants
              instead (`fair`: a skip scan of ix_schedule_state_tenant_due, then each
              tenant's earliest due rows, same locks)
    lookup    the rows' jobs (status, options) and which schedules have an item active
    quotas    only when a tenant has a fire-time quota: its budget, and the firing rows
              past it decided SKIPPED_QUOTA (`quotas`; one empty lookup otherwise)
    decide    core.firing.decide once per distinct input (pure; rows share the result)
    insert    queue items                  (UNIQUE(scheduled_for, schedule_id));
              on PostgreSQL decided and inserted together, chunk by chunk
    update    schedule_state: last_run/next_run/run_count, a compare-and-set on the
              next_run read; `schedules` only for rows disabled (revision) or resumed
    events    the occurrence ledger
    (pauses)  rows whose pause ended with a policy for what it passed (once, all):
              BatchResult.ended_pauses, which the caller enqueues before it commits
              (service.backfills.enqueue_passed; processes.fire_lanes)
    commit

The two databases take one path each, after the fence (chosen by store.dialects):

- SQLite (`sqlite.py`): the select fills a temporary table with the due
  rows' keys and decision inputs; Python reads one row per distinct input,
  decides, and writes a plan row for it; the inserts and the update are one
  INSERT … SELECT / UPDATE … FROM each, joining the due rows to their plan.
  No per-row Python: SQLite copies payloads and names itself. Items and
  ledger rows are written unfiled; the dispatcher files them between bursts
  (store.filing), so a burst's commit does not grow with the history.
- PostgreSQL (`postgresql.py`): the due rows come to Python, which builds
  the items and events as COPY text; one UPDATE per decision. There the
  server's CPU, not Python, is the limit, and COPY is its cheapest insert.
  The items' COPY streams: rows are decided 500 at a time and each chunk is
  sent as it is ready, so the server inserts while Python builds (rows that
  may cancel are decided, and cancelled, before the COPY opens).

Reading the due rows inside the fire transaction *is* the re-read SPEC §6
asks for: a row disabled, removed or rescheduled since the last look is simply
not selected. Nothing is written outside this transaction, so a crash at any
point leaves either all of a batch or none of it.

The modules: `reads` (the scans and lookups), `planner` (the decisions both
paths share), `occurrences` (the planner's memoized occurrence functions),
`sqlite` and `postgresql` (one fire path each), `transaction` (its fence,
report and written columns), `crash` (the crash points), `quotas` (tenant
fire-time quotas, called from both paths).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Connection

from cronplane.core.firing import OccurrenceLoader
from cronplane.core.quotas import UNLIMITED, Quota
from cronplane.store import calendars as calendar_store
from cronplane.store import dialects, lease
from cronplane.store.dispatch.crash import CRASH_ENV, CRASH_POINTS, crash_point
from cronplane.store.dispatch.fair import Fairness
from cronplane.store.dispatch.occurrences import Occurrences
from cronplane.store.dispatch.planner import Planner
from cronplane.store.dispatch.postgresql import fire_postgresql
from cronplane.store.dispatch.reads import count_due, earliest_next_run
from cronplane.store.dispatch.sqlite import fire_sqlite
from cronplane.store.dispatch.transaction import BatchResult, EndedPause, Fencing

# One fire transaction's select, inserts and updates, per database: chosen here, so the
# dialects know nothing of dispatch (the import goes one way).
_FIRE_PATHS: dict[type[dialects.Dialect], Callable[..., BatchResult]] = {
    dialects.SQLite: fire_sqlite,
    dialects.PostgreSQL: fire_postgresql,
}

__all__ = [
    "CRASH_ENV",
    "CRASH_POINTS",
    "BatchResult",
    "EndedPause",
    "Fairness",
    "Fencing",
    "checkpoint",
    "count_due",
    "crash_point",
    "earliest_next_run",
    "fire_batch",
]


def fire_batch(
    conn: Connection,
    *,
    fencing: Fencing,
    now: datetime,
    limit: int,
    occurrences: OccurrenceLoader,
    quotas: Quota = UNLIMITED,
    fairness: Fairness | None = None,
) -> BatchResult:
    """Fire up to `limit` due rows inside the caller's transaction (see module docstring).

    Raises lease.Fenced (the caller's transaction must roll back) when our term
    is no longer current. `quotas` is the platform's default tenant quota.
    """
    lease.fence(conn, fencing.lease_name, fencing.holder, fencing.term, now)
    crash_point("after_fence")
    dialect = dialects.of(conn)
    planner = Planner(
        dialect,
        now,
        fencing.term,
        Occurrences(occurrences),
        quotas,
        lambda tenant: calendar_store.tenant_calendars(conn, tenant),
    )
    return _FIRE_PATHS[type(dialect)](conn, planner, limit, fairness)


def checkpoint(conn: Connection) -> None:
    """After a burst: the checkpoint its fire transactions deferred (SQLite's WAL).

    Fire transactions defer SQLite's automatic checkpoint (see fire_sqlite),
    so its fsyncs come after the burst's last commit, not between its batches.
    A no-op where nothing is deferred (PostgreSQL).
    """
    dialects.of(conn).after_burst(conn)
