"""Fairness benchmark: tenant A's burst against tenant B's few schedules, through `cronplane serve`.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/fairness_bench.py                       # A 100,000, B 100, both databases
    .venv/bin/python bench/fairness_bench.py --a 20000 --no-pg     # shorter

    # before/after in one sitting: the same bench over another checkout's code
    PYTHONPATH=/path/to/main/src:bench .venv/bin/python bench/fairness_bench.py

Each run: a fresh database (the e2e bench's: a SQLite file, or a fresh
PostgreSQL database `cronplane_fairness_bench_<pid>`, dropped at exit), migrated, with the worker
bench's no-op job (`python:worker_bench:noop`) for tenant A (`bench`) and
tenant B (`tenant-b`). A's --a daily schedules are seeded first, then B's
--b, all due at one instant T a few seconds ahead (so B's rows come last in
next_run order, ties broken by insertion). Then `cronplane serve` (the
e2e bench's start, its defaults unless --serve-args) runs until every item
of both tenants has succeeded.

Reported, per run:

- **B fired p99**: while the burst runs, this process polls B's item count
  every 10 ms; B's k-th item counts as fired when the count first reaches k
  (so within 10 ms of its commit); p50/p99 over B's items, from T.
- **B started p99**: B's items' `started_at` - T (T is their
  `scheduled_for`), p50/p99.
- **A fired by**: when the dispatcher logged the tick that fired the last of
  A + B (the e2e bench's `fire_logged`), from T; and **all done**: the last
  `finished_at` of either tenant, from T.

Whether B's figures were taken "while A's burst is still being fired and
run" is visible: B's p99 is compared with A's fired-by and all-done.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

import machine
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from dispatch_bench import clock_for, percentile, seed
from e2e_bench import fire_logged, free_port, start_serve, stop, wait_ready
from worker_bench import PG_ADMIN, fresh_postgres, register_noop

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "worker_bench")

PG_NAME = "cronplane_fairness_bench"
A, B = "bench", "tenant-b"
PROGRESS = (
    "SELECT count(*), count(*) FILTER (WHERE status = 'succeeded'), "
    "count(*) FILTER (WHERE status IN ('failed', 'expired', 'cancelled')) "
    "FROM queue_items WHERE tenant IN ('bench', 'tenant-b')"
)
PROGRESS_SQLITE = (
    "SELECT count(*), sum(status = 'succeeded'), "
    "sum(status IN ('failed', 'expired', 'cancelled')) "
    "FROM queue_items WHERE tenant IN ('bench', 'tenant-b')"
)


def add_tenant_b(database: Database, count: int, due: datetime) -> None:
    """B's job (a copy of A's no-op job) and `count` schedules due at `due`, seeded after A's."""
    seed(database, 0, count, due, "b-")
    new_id = "lower(hex(randomblob(16)))" if database.dialect == "sqlite" else "gen_random_uuid()"
    with database.begin() as conn:
        conn.execute(text("UPDATE schedules SET tenant = :b WHERE name LIKE 'b-%'"), {"b": B})
        conn.execute(
            text(
                "UPDATE schedule_state SET tenant = :b "
                "WHERE id IN (SELECT id FROM schedules WHERE name LIKE 'b-%')"
            ),
            {"b": B},
        )
        conn.execute(
            text(
                "INSERT INTO jobs (id, tenant, stack, name, title, kind, status, payload, "
                "payload_schema, target, options, source, created_at, updated_at, revision) "
                f"SELECT {new_id}, :b, stack, name, title, kind, status, payload, "
                "payload_schema, target, options, source, created_at, updated_at, revision "
                "FROM jobs WHERE tenant = :a"
            ),
            {"a": A, "b": B},
        )


class FirePoller(threading.Thread):
    """Polls B's item count; when each of B's items was first seen (monotonic)."""

    def __init__(self, database: Database, count: int) -> None:
        super().__init__(daemon=True)
        self.database, self.count = database, count
        self.seen: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        query = text("SELECT count(*) FROM queue_items WHERE tenant = :b")
        while not self.done.is_set() and len(self.seen) < self.count:
            with self.database.read() as conn:
                found = int(conn.execute(query, {"b": B}).scalar_one())
            now = time.monotonic()
            self.seen += [now] * (found - len(self.seen))
            time.sleep(0.01)


def run(url: str, args: argparse.Namespace, options: list[str], log: Path) -> dict[str, Any]:
    """One burst (A and B) through a fresh `cronplane serve`; its figures."""
    register_noop(url)
    database = Database(url)
    clock = clock_for(database)
    due = (clock.now() + timedelta(seconds=args.lead + args.a / 5_000)).replace(microsecond=0)
    seed(database, 0, args.a, due, "a-")
    add_tenant_b(database, args.b, due)
    if database.dialect == "postgresql":
        with database.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
    progress = PROGRESS if database.dialect == "postgresql" else PROGRESS_SQLITE
    total = args.a + args.b
    server = start_serve(url, free_port(), options, log)
    poller = FirePoller(database, args.b)
    try:
        wait_ready(server, int(server.args[server.args.index("--port") + 1]), timeout=30)
        ahead = (due - clock.now()).total_seconds()
        assert ahead > 0.3, f"the server was ready {-ahead:.1f} s after T; raise --lead"
        time.sleep(ahead - 0.3)
        # T on the monotonic clock (the poller's), read from the database's clock.
        t_mono = time.monotonic() + (due - clock.now()).total_seconds()
        poller.start()
        deadline = time.monotonic() + args.timeout
        load = []
        while True:
            with database.read() as conn:
                count, succeeded, bad = conn.execute(text(progress)).one()
            if bad:
                raise RuntimeError(f"{bad} items did not succeed; see {log}")
            if count == total and succeeded == total:
                break
            if server.poll() is not None:
                raise RuntimeError(f"cronplane serve exited with {server.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{succeeded} of {total} succeeded after {args.timeout:.0f} s")
            load.append(os.getloadavg()[0])
            time.sleep(0.25)
    finally:
        poller.done.set()
        stop(server)
    poller.join(timeout=5)
    # Through the table's typed columns: SQLite stores instants as text.
    with database.read() as conn:
        mine = queue_items.c.tenant == B
        started = [
            (at - due).total_seconds()
            for at in conn.execute(select(queue_items.c.started_at).where(mine)).scalars()
        ]
        both = queue_items.c.tenant.in_([A, B])
        last = conn.execute(select(func.max(queue_items.c.finished_at)).where(both)).scalar_one()
    database.dispose()
    fired = [seen - t_mono for seen in poller.seen]
    return {
        "b_fired_p50": percentile(fired, 0.5),
        "b_fired_p99": percentile(fired, 0.99),
        "b_started_p50": percentile(started, 0.5),
        "b_started_p99": percentile(started, 0.99),
        "fired_by": (fire_logged(log, total) - due).total_seconds(),
        "all_done": (last - due).total_seconds(),
        "load": max(load) if load else os.getloadavg()[0],
    }


ROW = (
    "| {database} | {a:,} + {b:,} | {b_fired_p50:.2f} / {b_fired_p99:.2f} "
    "| {b_started_p50:.2f} / {b_started_p99:.2f} | {fired_by:.2f} | {all_done:.2f} | {load:.2f} |"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--a", type=int, default=100_000, help="tenant A's schedules due at T")
    parser.add_argument("--b", type=int, default=100, help="tenant B's schedules due at T")
    parser.add_argument("--runs", type=int, default=1, help="runs per database")
    parser.add_argument("--serve-args", default="", help="options for `cronplane serve`")
    parser.add_argument("--lead", type=float, default=6.0, help="seconds from seeding to T")
    parser.add_argument("--timeout", type=float, default=300.0, help="most seconds from T")
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    options = shlex.split(args.serve_args)
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-fairness-bench-"))
    import cronplane

    print(machine.header("fairness bench"))
    print(f"# cronplane from {Path(cronplane.__file__).parent}")
    print(
        f"# A={args.a:,} and B={args.b:,} schedules due at T; `cronplane serve {' '.join(options)}`"
    )
    print(
        "\n| database | A + B | B fired p50 / p99 (s) | B started p50 / p99 (s) "
        "| A+B fired by (s) | all done (s) | load (max 1-min) |\n|---|---|---|---|---|---|---|",
        flush=True,
    )
    rows = []
    kinds = ([] if args.no_sqlite else ["sqlite"]) + ([] if args.no_pg else ["postgres"])
    try:
        for kind in kinds:
            for i in range(args.runs):
                if kind == "sqlite":
                    url = f"sqlite:///{workdir / f'fair-{i}.db'}"
                else:
                    url = fresh_postgres(args.pg_admin, PG_NAME)
                log = workdir / f"serve-{kind}-{i}.log"
                figures = run(url, args, options, log)
                rows.append({"database": kind, "a": args.a, "b": args.b, **figures})
                print(ROW.format(**rows[-1]), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"bench": "fairness", "a": args.a, "b": args.b, "runs": rows}))


if __name__ == "__main__":
    main()
