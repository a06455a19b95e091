"""The fire-time quota's rule, as a property (store.dispatch.quotas): of each tenant's firing
rows, in order, the first `budget` fire and every later one is marked; tenants without a
budget are never marked. SQLite ranks in SQL (a window function), PostgreSQL in Python:
both must mark the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.core.quotas import FireBudget
from cronplane.store.database import Database
from cronplane.store.dispatch import quotas
from cronplane.store.dispatch.sqlite import _FIRE_DUE

TENANTS = ("acme", "globex", "initech")
rows_strategy = st.lists(
    st.tuples(st.sampled_from(TENANTS), st.booleans()), min_size=0, max_size=40
)  # (tenant, fires?) in schedule-id order
budgets_strategy = st.dictionaries(
    st.sampled_from(TENANTS), st.integers(min_value=0, max_value=10), max_size=3
)


def _expected(rows: list[tuple[str, bool]], budgets: dict[str, int]) -> set[int]:
    seen: dict[str, int] = {}
    marked = set()
    for n, (tenant, fires) in enumerate(rows, start=1):
        if not fires or tenant not in budgets:
            continue
        seen[tenant] = seen.get(tenant, 0) + 1
        if seen[tenant] > budgets[tenant]:
            marked.add(n)
    return marked


def _budgets(budgets: dict[str, int]) -> dict[str, FireBudget]:
    return {t: FireBudget(b, "max_fires_per_minute", b + 1) for t, b in budgets.items()}


@given(rows_strategy, budgets_strategy)
def test_python_ranking_marks_the_rows_past_each_budget(
    rows: list[tuple[str, bool]], budgets: dict[str, int]
) -> None:
    firing = [(n, tenant) for n, (tenant, fires) in enumerate(rows, start=1) if fires]
    over = quotas.over_budget(firing, _budgets(budgets))
    assert set(over) == _expected(rows, budgets)
    assert all(
        value == ("max_fires_per_minute", budgets[t] + 1)
        for t, value in ((rows[n - 1][0], v) for n, v in over.items())
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows_strategy, budgets=budgets_strategy)
def test_sqlite_ranking_marks_the_same_rows(
    tmp_path: Path, rows: list[tuple[str, bool]], budgets: dict[str, int]
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'rank.db'}")
    with database.begin() as conn:
        conn.exec_driver_sql(_FIRE_DUE)
        conn.exec_driver_sql("DELETE FROM temp.fire_due")
        # The inputs key: (fires?, tenant) stands in for the decision inputs and the tenant.
        keys = [json.dumps([fires, tenant]) for tenant, fires in rows]
        for n, key in enumerate(keys, start=1):
            conn.exec_driver_sql(
                "INSERT INTO temp.fire_due (n, k, sk, next_run, inputs) VALUES (?, ?, ?, '', ?)",
                (n, n, n, key),
            )
        firing = sorted({key for key, (_t, fires) in zip(keys, rows, strict=True) if fires})
        quotas.mark_sqlite(conn, firing, _budgets(budgets), 1)
        marked = {
            n
            for n, inputs in conn.exec_driver_sql("SELECT n, inputs FROM temp.fire_due")
            if inputs.startswith(quotas.MARK)
        }
    assert marked == _expected(rows, budgets)
