"""Whole-tenant listing: a page of 100 out of 100,000 schedules in 4 stacks.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/tenant_list_bench.py sqlite:////tmp/tenant-list.db
    .venv/bin/python bench/tenant_list_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_list

The database must exist (an empty SQLite file path or an empty PostgreSQL
database); it is migrated, emptied and seeded with SQL, then the store's
`list_page` is timed for tenant `bench` with no other filter (median and
max of 30 pages, in process).
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import UTC, datetime

from cronplane.core.queries import ScheduleQuery
from cronplane.store.database import Database
from cronplane.store.schedules import list_page
from dispatch_bench import reset, seed

ROWS = 100_000
STACKS = 4


def main() -> None:
    url = sys.argv[1]
    database = Database(url)
    database.upgrade()
    reset(database)
    due = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    per_stack = ROWS // STACKS
    for stack in range(STACKS):
        seed(database, stack * per_stack, (stack + 1) * per_stack, due, f"s{stack}-")
    times = []
    for _ in range(30):
        started = time.perf_counter()
        with database.read() as conn:
            rows = list_page(conn, "bench", ScheduleQuery(), limit=100)
        times.append((time.perf_counter() - started) * 1000)
    assert len(rows) == 100
    print(
        f"{database.dialect}: whole-tenant page of 100 at {ROWS:,}: "
        f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms"
    )


if __name__ == "__main__":
    main()
