"""The metrics scrape's database gauges over a big database: each query, timed (issue 37).

Run by hand on a seeded database (bench/selector_bench.py seeds 1,000,000 schedules)::

    .venv/bin/python bench/scrape_bench.py sqlite:////tmp/i37-sel-1m.db
    .venv/bin/python bench/scrape_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_i37_sel

Each of the gauges' queries runs `--runs` times in its own read transaction, as
`api.metrics.DatabaseGauges` reads them; the milliseconds of each run are printed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.dispatch import count_due
from cronplane.store.schedule_counts import count_states

QUERIES: dict[str, Callable[[Connection], Any]] = {
    "count_states": count_states,
    "count_due": lambda conn: count_due(conn, datetime.now(UTC)),
    "count_active": queue.count_active,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    database = Database(args.url)
    for name, query in QUERIES.items():
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            with database.read() as conn:
                answer = query(conn)
            times.append(round((time.perf_counter() - started) * 1000))
        print(f"{database.dialect} {name}: {times} ms -> {answer}")


if __name__ == "__main__":
    main()
