"""The gauge's counts per state equal the states the service derives, row by row."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete

from cronplane.clock import FakeClock
from cronplane.core.model import STATES
from cronplane.core.queries import ScheduleQuery
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.schedule_counts import count_states
from cronplane.store.schedules import insert_rows
from cronplane.store.tables import schedule_state, schedules
from firing_support import START, schedule_row

# (enabled, has a next run, paused, a one-off): every combination a row can be stored in.
rows_of = st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()))


def test_counts_per_state_equal_the_derived_states(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(rows_of, st.sampled_from(["acme", "_system"]))
    def check(shapes: list[tuple[bool, bool, bool, bool]], tenant: str) -> None:
        rows = []
        for n, (enabled, has_next, paused, one_off) in enumerate(shapes):
            cron = f"@once {START.isoformat()}" if one_off else "* * * * *"
            row = schedule_row(
                f"r{n}", tenant=tenant, cron=cron, enabled=enabled, next_run=START,
                paused_at=START if paused else None,
            )  # fmt: skip
            rows.append({**row, "next_run": START if has_next else None})
        with database.begin() as conn:
            conn.execute(delete(schedule_state))
            conn.execute(delete(schedules))
            insert_rows(conn, rows)
        shown = service.list_schedules(tenant, ScheduleQuery(limit=1000)).items
        derived = Counter(row.state for row in shown)
        with database.read() as conn:
            counted = count_states(conn)
        assert counted == {state: derived.get(state, 0) for state in STATES}

    check()
