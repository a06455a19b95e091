"""How many schedules are in each state, for the `cronplane_schedules{state}` gauge.

The state is `core.model.STATE_RULES` (first match wins) written as one CASE,
so the count is one grouped statement over the schedules and their state rows
(a scan: the scrape pays for the number of schedules, once per scrape).
tests/api/test_schedule_states_metric.py holds the CASE to the rules.
"""

from __future__ import annotations

from sqlalchemy import Connection, case, func, literal, select

from cronplane.core.model import STATES
from cronplane.store.tables import schedule_state, schedules
from cronplane.store.tables.schedules import SCHEDULE_ROWS

# STATE_RULES, in order: inactive, done, ended, paused, else active.
STATE = case(
    (schedule_state.c.enabled.is_(False), literal("inactive")),
    (schedule_state.c.next_run.is_(None) & schedules.c.cron.startswith("@once "), literal("done")),
    (schedule_state.c.next_run.is_(None), literal("ended")),
    (schedules.c.paused_at.is_not(None), literal("paused")),
    else_=literal("active"),
)


def count_states(conn: Connection) -> dict[str, int]:
    """Schedules per state, every one of STATES (zero included)."""
    counts = dict.fromkeys(STATES, 0)
    state = STATE.label("state")
    rows = conn.execute(select(state, func.count()).select_from(SCHEDULE_ROWS).group_by(state))
    counts.update({str(name): int(count) for name, count in rows})
    return counts
