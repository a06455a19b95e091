"""A burst's fire time as the tables grow: the sustained drift, without waiting for it.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/burst_growth_bench.py                    # SQLite, 60 bursts
    .venv/bin/python bench/burst_growth_bench.py --bursts 120 --pg
    .venv/bin/python bench/burst_growth_bench.py --without ix_events_schedule

N schedules `@every 10s` (the seconds bench's seeding: all due at each
instant, overlap allow, the worker bench's no-op job) in a fresh SQLite file
(or, with --pg, a fresh PostgreSQL database `cronplane_growth_bench_<pid>` on
--pg-admin). A `FakeClock` steps 10 s at a time and the real
`Dispatcher.tick()` fires each instant's N rows, so --bursts instants (the
seconds bench's 10 minutes are 60) run back to back as fast as the machine
goes (--gap sleeps between them, as a real 10 s would). No workers: the
items and ledger events pile up as in `seconds_bench.py --sustained`.
Printed: each burst's wall time (the tick, checkpoint included, less the
filing it did after the burst), the time the dispatcher then spent filing
the burst's rows (SQLite, store.filing: the ticks it runs while rows wait),
the means of the first and the last ten, and the database's size at the end.
--profile adds the last burst's time per statement (and in the commits);
--cache-mib sets the SQLite fire connection's page cache.

--without NAME drops an index after migrating (a what-if: which index makes
the drift; the product needs them all).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import event, text

import machine
from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import DEFAULT_BATCH, Dispatcher
from cronplane.store.database import Database
from cronplane.store.dispatch import sqlite as fire_sqlite
from seconds_bench import seed
from worker_bench import PG_ADMIN, register_noop

PG_NAME = "cronplane_growth_bench"
START = datetime(2026, 12, 3, 12, tzinfo=UTC)


def fresh_url(args: argparse.Namespace, workdir: Path) -> str:
    if not args.pg:
        return f"sqlite:///{workdir / 'growth.db'}"
    return machine.fresh_postgres(args.pg_admin, PG_NAME)


def sizes(database: Database) -> str:
    with database.read() as conn:
        if database.dialect == "sqlite":
            (pages,) = conn.exec_driver_sql("PRAGMA page_count").one()
            (size,) = conn.exec_driver_sql("PRAGMA page_size").one()
            return f"{pages * size / 1e6:,.0f} MB"
        (total,) = conn.exec_driver_sql("SELECT pg_database_size(current_database())").one()
        return f"{total / 1e6:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--schedules", type=int, default=10_000)
    parser.add_argument("--bursts", type=int, default=60)
    parser.add_argument("--pg", action="store_true", help="PostgreSQL instead of SQLite")
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--without", action="append", default=[], metavar="INDEX")
    parser.add_argument(
        "--profile", action="store_true", help="time each statement of the last burst"
    )
    parser.add_argument(
        "--gap", type=float, default=0.0, help="real seconds to sleep between bursts"
    )
    parser.add_argument(
        "--cache-mib", type=int, help="the SQLite fire connection's page cache (default 64)"
    )
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="the dispatcher's batch")
    args = parser.parse_args()
    print(machine.header("burst growth bench"))
    if args.cache_mib:
        fire_sqlite.SQLITE_CACHE_KIB = args.cache_mib * 1024
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-growth-"))
    url = fresh_url(args, workdir)
    register_noop(url)
    database = Database(url)
    for name in args.without:
        with database.begin() as conn:
            conn.execute(text(f"DROP INDEX {name}"))
    seed(database, args.schedules, START)
    clock = FakeClock(START - timedelta(seconds=1))
    dispatcher = Dispatcher(database, clock, holder="bench", batch_size=args.batch)
    dispatcher.tick()  # the lease first, as a running leader has it
    # The filing a tick does after its burst (SQLite, store.filing), timed apart.
    filing = [0.0]
    file_chunk = dispatcher._file

    def timed_file(*arguments: Any) -> tuple[int, float]:
        started = time.perf_counter()
        try:
            return file_chunk(*arguments)
        finally:
            filing[0] += time.perf_counter() - started

    dispatcher._file = timed_file  # type: ignore[method-assign]
    took: list[float] = []
    filed_in: list[float] = []
    spent: dict[str, float] = {}
    for k in range(args.bursts):
        clock.set(START + timedelta(seconds=10 * k))
        if args.profile and k == args.bursts - 1:
            spent = statement_times(database)
        filing[0] = 0.0
        started = time.perf_counter()
        report = dispatcher.tick()
        took.append(time.perf_counter() - started - filing[0])
        assert report.fired == args.schedules, (report.fired, report.error)
        # Then the dispatcher's next ticks, as its loop runs them while more wait
        # (a full chunk: it ticks again at once).
        while report.filed and report.sleep == 0:
            report = dispatcher.tick()
        filed_in.append(filing[0])
        print(
            f"burst {k:3d}: {took[-1] * 1000:7.1f} ms, filing after it {filing[0] * 1000:7.1f} ms",
            flush=True,
        )
        time.sleep(args.gap)
    first, last = statistics.mean(took[:10]), statistics.mean(took[-10:])
    kind = "postgres" if args.pg else "sqlite"
    without = ", ".join(args.without) or "-"
    filed_first, filed_last = statistics.mean(filed_in[:10]), statistics.mean(filed_in[-10:])
    print(
        "\n| database | without | schedules | bursts | first 10 (ms) | last 10 (ms) "
        "| filing after, first 10 → last 10 (ms) | size |"
    )
    print("|---|---|---:|---:|---:|---:|---|---|")
    print(
        f"| {kind} | {without} | {args.schedules:,} | {args.bursts} | {first * 1000:,.0f} | "
        f"{last * 1000:,.0f} | {filed_first * 1000:,.0f} → {filed_last * 1000:,.0f} "
        f"| {sizes(database)} |"
    )
    if args.profile:
        print("\nThe last burst, by statement (ms):\n")
        for statement, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:8]:
            print(f"- {seconds * 1000:,.1f}  {statement}")
    database.dispose()


def statement_times(database: Database) -> dict[str, float]:
    """Wall time per statement (by its first words) and of the commits, from now on."""
    spent: dict[str, float] = defaultdict(float)

    @event.listens_for(database.engine, "before_cursor_execute")
    def started(conn: Any, *_: Any) -> None:
        conn.info["bench_started"] = time.perf_counter()

    @event.listens_for(database.engine, "after_cursor_execute")
    def finished(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        key = " ".join(statement.split()[:4])
        spent[key] += time.perf_counter() - conn.info.pop("bench_started")

    dialect = database.engine.dialect
    commit = dialect.do_commit

    def timed_commit(dbapi_connection: Any) -> None:
        began = time.perf_counter()
        commit(dbapi_connection)
        spent["COMMIT"] += time.perf_counter() - began

    dialect.do_commit = timed_commit  # type: ignore[method-assign]
    return spent


if __name__ == "__main__":
    main()
