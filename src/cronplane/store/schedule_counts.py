"""How many schedules are in each state, for the `cronplane_schedules{state}` gauge.

The state is `core.model.STATE_RULES` (first match wins). A grouped CASE over
every row read a million rows per scrape (3 s on SQLite, 0.5 s on PostgreSQL
at 1,000,000 schedules: docs/performance.md), so the states are counted the
other way round: every state but `active` is rare or has an index of its own,
and `active` is what is left.

- all rows, and the enabled ones (`ix_schedule_state_due` is partial on enabled):
  `inactive` is their difference;
- enabled rows with no next run (the NULL end of `ix_schedule_state_due`): `done`
  for a one-off, `ended` for the rest;
- enabled rows with a next run and a pause (`ix_schedules_paused` is partial on
  paused_at): `paused`;
- `active`: the enabled rows left.

tests/store/test_schedule_counts.py holds the counts to the rules on random rows,
and tests/api/test_schedule_states_metric.py the scrape to the service's states.
"""

from __future__ import annotations

from sqlalchemy import Connection, func, select

from cronplane.core.model import STATES
from cronplane.store.tables import schedule_state
from cronplane.store.tables.schedules import SCHEDULE_ROWS, schedules


def count_states(conn: Connection) -> dict[str, int]:
    """Schedules per state, every one of STATES (zero included)."""
    enabled = schedule_state.c.enabled.is_(True)
    one_off = schedules.c.cron.startswith("@once ")
    every = select(func.count()).select_from(schedule_state).scalar_subquery()
    on = select(func.count()).select_from(schedule_state).where(enabled).scalar_subquery()
    done, ended = (
        select(func.count())
        .select_from(SCHEDULE_ROWS)
        .where(enabled, schedule_state.c.next_run.is_(None), kind)
        .scalar_subquery()
        for kind in (one_off, ~one_off)
    )
    paused = (
        select(func.count())
        .select_from(SCHEDULE_ROWS)
        .where(schedules.c.paused_at.is_not(None), enabled, schedule_state.c.next_run.is_not(None))
        .scalar_subquery()
    )
    total, active_or_held, done_n, ended_n, paused_n = conn.execute(
        select(every, on, done, ended, paused)
    ).one()
    counts = dict.fromkeys(STATES, 0)
    counts.update(
        inactive=total - active_or_held,
        done=done_n,
        ended=ended_n,
        paused=paused_n,
        active=active_or_held - done_n - ended_n - paused_n,
    )
    return counts
