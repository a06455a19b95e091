"""Dispatch benchmark: cronplane (SQLite, PostgreSQL) against APScheduler 3.11, same workload.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/dispatch_bench.py                    # full run (~10 min)
    .venv/bin/python bench/dispatch_bench.py --sizes 1000,10000 --idle 1000,100000

Two workloads, every system in the same run:

- **burst**: N schedules (daily) all due at one instant T. The clock
  starts at T; we record when each occurrence became a committed queue item
  (cronplane: the commit of its batch) or when APScheduler called the job
  (APScheduler has no queue: calling a no-op job is its "item"). Reported:
  fires per second (N / (last - T)) and lateness p50 / p99 (item - T).
  CPU: the dispatcher's process, plus on PostgreSQL the server backends of
  the bench database (/proc), which do part of the work. APScheduler's
  SQLAlchemy store gets an SQLite file set up as ours (WAL, synchronous
  NORMAL).
- **idle**: N schedules, none due. Reported: the cost of one dispatcher step
  (cronplane `Dispatcher.tick()`; APScheduler `_process_jobs()`), CPU used
  while idle (share of one core over a few seconds of the real loop), and
  the process RSS, each measured in a fresh child process.

With `--pgbouncer` the PostgreSQL burst runs a second time through a
PgBouncer in transaction pooling mode, started for the run as the tests start
theirs (tests/pgbouncer_server.py), on the same database, its URL carrying
`?pgbouncer=true` (docs/operations.md, "Through PgBouncer"):
`cronplane-pgbouncer`.

Rows are seeded with one SQL statement (generate_series / a recursive CTE),
so seeding costs no memory in the measured process. PostgreSQL: a database
`cronplane_dispatch_bench_<pid>` is created on --pg-admin (default local server;
unique to the run, dropped at exit).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text

import machine
from cronplane.clock import SystemClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database, DatabaseClock
from cronplane.store.tables import metadata

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PG_NAME = "cronplane_dispatch_bench"

# -- seeding ----------------------------------------------------------------------

SEED_COLUMNS = (
    "id, tenant, stack, environment, name, job, cron, timezone, payload, source, "
    "misfire_grace, overlap, created_at, updated_at, revision, declared, overrides"
)
# Each new schedule's state (store.tables.schedule_state): enabled, due at :next,
# last fired at :last (None: never).
STATES = (
    "INSERT INTO schedule_state (id, tenant, enabled, next_run, last_run, run_count) "
    "SELECT s.id, s.tenant, true, :next, :last, 0 FROM schedules AS s "
    "WHERE NOT EXISTS (SELECT 1 FROM schedule_state AS st WHERE st.id = s.id)"
)


def _sqlite_ts(value: datetime) -> str:
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def seed(
    database: Database,
    start: int,
    stop: int,
    next_run: datetime,
    prefix: str,
    *,
    tenant: str = "bench",
) -> None:
    """Insert `tenant`'s schedules `prefix{start..stop-1}` (daily, `0 0 * * *`) due at
    `next_run`, in SQL.

    Daily, so a burst never reaches the schedules' next occurrence mid-run.
    """
    if stop <= start:
        return
    created = next_run - timedelta(days=1)
    with database.begin() as conn:
        if database.dialect == "sqlite":
            conn.execute(
                text(
                    "WITH RECURSIVE seq(n) AS (SELECT :start UNION ALL SELECT n + 1 FROM seq "
                    f"WHERE n < :stop - 1) INSERT INTO schedules ({SEED_COLUMNS}) "
                    "SELECT lower(hex(randomblob(16))), :tenant, 'default', 'default', "
                    ":prefix || n, 'job', '0 0 * * *', 'UTC', '{\"n\": 1}', 'user', NULL, "
                    "'skip', :created, :created, 1, NULL, '[]' FROM seq"
                ),
                {
                    "start": start,
                    "stop": stop,
                    "prefix": prefix,
                    "created": _sqlite_ts(created),
                    "tenant": tenant,
                },
            )
            states = {"next": _sqlite_ts(next_run), "last": _sqlite_ts(created)}
        else:
            conn.execute(
                text(
                    f"INSERT INTO schedules ({SEED_COLUMNS}) SELECT gen_random_uuid(), :tenant, "
                    "'default', 'default', :prefix || n, 'job', '0 0 * * *', 'UTC', "
                    "'{\"n\": 1}'::jsonb, 'user', NULL, 'skip', "
                    ":created, :created, 1, NULL, '[]'::jsonb "
                    "FROM generate_series(CAST(:start AS int), CAST(:stop AS int) - 1) AS n"
                ),
                {
                    "start": start,
                    "stop": stop,
                    "prefix": prefix,
                    "created": created,
                    "tenant": tenant,
                },
            )
            states = {"next": next_run, "last": created}
        conn.execute(text(STATES), states)
    if database.dialect == "postgresql":
        with database.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "VACUUM ANALYZE schedules, schedule_state"
            )


def reset(database: Database, tenants: tuple[str, ...] = ("bench",)) -> None:
    """Empty every table and register the bench job (of each of `tenants`)."""
    with database.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())
        for n, tenant in enumerate(tenants):
            _add_job(database, conn, tenant, n)


def _add_job(database: Database, conn: Any, tenant: str, n: int) -> None:
    conn.execute(
        text(
            "INSERT INTO jobs (id, tenant, stack, name, title, kind, status, payload, "
            "payload_schema, target, options, source, created_at, updated_at, revision) "
            "VALUES (:id, :tenant, 'default', 'job', 'bench', 'python', 'active', :p, NULL, "
            "'python:bench:noop', :p, 'user', :now, :now, 1)"
        ),
        {
            "id": f"{n:032x}" if database.dialect == "sqlite" else str(uuid.UUID(int=n)),
            "tenant": tenant,
            "p": "{}",
            "now": _sqlite_ts(SystemClock().now())
            if database.dialect == "sqlite"
            else SystemClock().now(),
        },
    )


def databases(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    """name → URL of each cronplane database in the run."""
    urls = {"cronplane-sqlite": f"sqlite:///{workdir / 'bench.db'}"}
    if not args.no_pg:
        urls["cronplane-postgres"] = machine.fresh_postgres(args.pg_admin, PG_NAME)
        if args.pgbouncer:
            urls["cronplane-pgbouncer"] = through_pgbouncer(
                args.pg_admin, urls["cronplane-postgres"]
            )
    for url in urls.values():
        Database(url).upgrade()
    return urls


def through_pgbouncer(admin_url: str, url: str) -> str:
    """`url` through a PgBouncer (transaction pooling) started for this run, stopped at exit."""
    import atexit

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import pgbouncer_server

    bouncer = pgbouncer_server.start(admin_url)
    atexit.register(bouncer.stop)
    return bouncer.through(url)


def clock_for(database: Database) -> Any:
    return DatabaseClock(database) if database.dialect == "postgresql" else SystemClock()


# -- burst -------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def exclude_calendar(database: Database, now: datetime) -> None:
    """Every seeded row excludes `bench-days`, 30 dates from 10 days on, moving to the next
    business day (issue 36: a calendar each row's decision reads, none excluding today)."""
    from cronplane.core.calendars import Calendar  # not in a build before issue 36
    from cronplane.store.calendars import save_calendar

    days = frozenset(now.date() + timedelta(days=10 + k) for k in range(30))
    with database.begin() as conn:
        save_calendar(
            conn, "bench", Calendar("bench-days", dates=days), description=None, now=now,
            actor="bench",
        )  # fmt: skip
        cast = "CAST(:e AS jsonb)" if database.dialect == "postgresql" else ":e"
        conn.execute(
            text(f"UPDATE schedules SET exclude = {cast}, on_excluded = 'next'"),
            {"e": '["bench-days"]'},
        )
    if database.dialect == "postgresql":  # as seed() leaves it: no dead rows from the UPDATE
        with database.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "VACUUM ANALYZE schedules"
            )


def burst_cronplane(url: str, n: int, calendar: bool = False) -> dict[str, float]:
    database = Database(url)
    reset(database)
    clock = clock_for(database)
    # Lead time for seeding (PostgreSQL also vacuums), so the burst starts at T.
    due = (clock.now() + timedelta(seconds=2 + n / 5_000)).replace(microsecond=0)
    seed(database, 0, n, due, "due-")
    if calendar:
        exclude_calendar(database, clock.now())
    dispatcher = Dispatcher(database, clock, holder="bench")  # default batch size
    dispatcher.tick()  # take the lease first, as a running leader has it
    wait = (due - clock.now()).total_seconds()
    assert wait > 0, "seeding took longer than the lead time"
    time.sleep(wait)
    # PostgreSQL does part of the work in its own processes: their CPU counts too.
    server = database.dialect == "postgresql"
    # The server's own URL (through PgBouncer: without cronplane's option).
    direct = database.engine.url.render_as_string(hide_password=False)
    backends = machine.postgres_backends_cpu(direct) if server else 0.0
    cpu = time.process_time()
    report = dispatcher.tick()
    cpu = time.process_time() - cpu
    if server:
        cpu += machine.postgres_backends_cpu(direct) - backends
    assert report.fired == n, (report.fired, report.error)
    lateness = [
        (batch.committed_at - due).total_seconds()
        for batch in report.batches
        for _ in range(batch.fired)
    ]
    database.dispose()
    return _burst_figures(n, lateness, cpu)


def _burst_figures(n: int, lateness: list[float], cpu: float) -> dict[str, float]:
    last = max(lateness)
    return {
        "fires_per_s": n / last,
        "p50": percentile(lateness, 0.50),
        "p99": percentile(lateness, 0.99),
        "cpu_s": cpu,
    }


CALLS: list[float] = []


def bench_job() -> None:
    """APScheduler's job: note when it was called."""
    CALLS.append(time.time())


def _aps_scheduler(store: Any) -> Any:
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler

    return BackgroundScheduler(
        jobstores={"default": store},
        executors={"default": ThreadPoolExecutor(10)},
        job_defaults={"coalesce": True, "misfire_grace_time": None, "max_instances": 1},
        timezone="UTC",
    )


def wal_engine(path: Path) -> Any:
    """An SQLite engine set up as cronplane sets its own (WAL, synchronous NORMAL), so the
    two durable stores are compared like for like."""
    from sqlalchemy import create_engine, event

    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    return engine


def burst_apscheduler(kind: str, n: int, workdir: Path) -> dict[str, float]:
    from apscheduler.jobstores.memory import MemoryJobStore
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.triggers.cron import CronTrigger

    CALLS.clear()
    path = workdir / f"aps-{n}.db"
    path.unlink(missing_ok=True)
    store = MemoryJobStore() if kind == "memory" else SQLAlchemyJobStore(engine=wal_engine(path))
    scheduler = _aps_scheduler(store)
    scheduler.start(paused=True)
    # Generous lead: add_job runs about 10,000 jobs/s on a slow machine.
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3 + n / 5_000)
    trigger = CronTrigger(hour=0, minute=0, timezone="UTC")
    if kind == "memory":
        for i in range(n):
            scheduler.add_job(bench_job, trigger, id=f"j{i}", next_run_time=due)
    else:
        # Seed the table in one executemany: add_job commits one row at a time.
        template = scheduler.add_job(bench_job, trigger, id="j0", next_run_time=due)
        state = template.__getstate__()
        rows = []
        for i in range(1, n):
            state["id"] = f"j{i}"
            rows.append(
                {
                    "id": f"j{i}",
                    "next_run_time": due.timestamp(),
                    "job_state": pickle.dumps(state, store.pickle_protocol),
                }
            )
        with store.engine.begin() as conn:
            conn.execute(store.jobs_t.insert(), rows)
    wait = (due - datetime.now(UTC)).total_seconds()
    assert wait > 0, "seeding took longer than the lead time"
    cpu = time.process_time()
    scheduler.resume()
    deadline = time.monotonic() + wait + 600
    while len(CALLS) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    cpu = time.process_time() - cpu
    scheduler.shutdown(wait=True)
    assert len(CALLS) >= n, f"only {len(CALLS)} of {n} calls"
    lateness = [t - due.timestamp() for t in CALLS[:n]]
    return _burst_figures(n, lateness, cpu)


# -- idle (measured in a child process) -------------------------------------------


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_cronplane_idle(url: str, seconds: float) -> dict[str, float]:
    database = Database(url)
    clock = clock_for(database)
    dispatcher = Dispatcher(database, clock, holder="idle")
    dispatcher.tick()
    durations = []
    for _ in range(200):
        started = time.perf_counter()
        report = dispatcher.tick()
        durations.append(time.perf_counter() - started)
        assert report.fired == 0 and report.leader
    dispatcher.release()
    loop = Dispatcher(database, clock, holder="idle-loop")
    thread = threading.Thread(target=loop.run, daemon=True)
    cpu = time.process_time()
    thread.start()
    time.sleep(seconds)
    cpu = time.process_time() - cpu
    loop.stop()
    thread.join()
    return {
        "tick_ms": statistics.median(durations) * 1000,
        "idle_cpu_pct": 100 * cpu / seconds,
        "rss_mb": rss_mb(),
    }


def child_apscheduler_idle(n: int, seconds: float) -> dict[str, float]:
    from apscheduler.jobstores.memory import MemoryJobStore
    from apscheduler.triggers.cron import CronTrigger

    scheduler = _aps_scheduler(MemoryJobStore())
    scheduler.start()
    trigger = CronTrigger(minute="*", timezone="UTC")
    base = datetime.now(UTC) + timedelta(days=1)
    for i in range(n):
        # Increasing next_run_time keeps MemoryJobStore's insert at the end (O(log n)).
        scheduler.add_job(
            bench_job, trigger, id=f"j{i}", next_run_time=base + timedelta(microseconds=i)
        )
    durations = []
    for _ in range(200):
        started = time.perf_counter()
        scheduler._process_jobs()
        durations.append(time.perf_counter() - started)
    cpu = time.process_time()
    time.sleep(seconds)
    cpu = time.process_time() - cpu
    result = {
        "tick_ms": statistics.median(durations) * 1000,
        "idle_cpu_pct": 100 * cpu / seconds,
        "rss_mb": rss_mb(),
    }
    scheduler.shutdown(wait=False)
    return result


def in_child(*args: str) -> dict[str, Any]:
    """This script's hidden command `args[0]` in a child process (machine.in_child)."""
    return machine.in_child(__file__, *args)


# -- the run -----------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="burst sizes")
    parser.add_argument("--idle", default="1000,10000,100000,1000000", help="idle sizes")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="also run PostgreSQL through a PgBouncer (transaction pooling) started for the run",
    )
    parser.add_argument(
        "--only",
        default="",
        help="burst systems to run, comma-separated (e.g. cronplane-postgres); default all",
    )
    parser.add_argument(
        "--calendar",
        action="store_true",
        help="also burst each cronplane database with every row excluding a 30-date calendar",
    )
    parser.add_argument(
        "--aps-sqlalchemy-max",
        type=int,
        default=1_000,
        help="largest burst for APScheduler's SQLAlchemy store (one UPDATE+commit per fire)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    idle_sizes = [int(s) for s in args.idle.split(",") if s]
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-bench-"))
    urls = databases(args, workdir)
    print(machine.header("dispatch bench"))

    print("\n## burst: N schedules due at one instant\n")
    print("| system | N | fires/s | lateness p50 (s) | p99 (s) | CPU (s) |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        runs: list[tuple[str, Any]] = [
            (name, lambda url=url, n=n: burst_cronplane(url, n)) for name, url in urls.items()
        ]
        if args.calendar:
            runs += [
                (f"{name}+calendar", lambda url=url, n=n: burst_cronplane(url, n, calendar=True))
                for name, url in urls.items()
            ]
        runs.append(("apscheduler-memory", lambda n=n: burst_apscheduler("memory", n, workdir)))
        if n <= args.aps_sqlalchemy_max:
            runs.append(
                ("apscheduler-sqlalchemy-sqlite", lambda n=n: burst_apscheduler("sql", n, workdir))
            )
        only = {name for name in args.only.split(",") if name}
        for name, run in runs:
            if only and name not in only:
                continue
            f = run()
            print(
                f"| {name} | {n:,} | {f['fires_per_s']:,.0f} | {f['p50']:.3f} | "
                f"{f['p99']:.3f} | {f['cpu_s']:.1f} |",
                flush=True,
            )

    print("\n## idle: N schedules, none due\n")
    print("| system | N | step (ms) | idle CPU (% of a core) | RSS (MB) |")
    print("|---|---|---|---|---|")
    later = SystemClock().now() + timedelta(days=1)
    for name, url in urls.items():
        database = Database(url)
        reset(database)
        seeded = 0
        for n in idle_sizes:
            seed(database, seeded, n, later, "idle-")
            seeded = n
            f = in_child("_cronplane_idle", url, str(args.idle_seconds))
            print(
                f"| {name} | {n:,} | {f['tick_ms']:.2f} | {f['idle_cpu_pct']:.1f} | "
                f"{f['rss_mb']:.0f} |",
                flush=True,
            )
        database.dispose()
    for n in idle_sizes:
        f = in_child("_apscheduler_idle", str(n), str(args.idle_seconds))
        print(
            f"| apscheduler-memory | {n:,} | {f['tick_ms']:.3f} | {f['idle_cpu_pct']:.1f} | "
            f"{f['rss_mb']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_cronplane_idle":
        print(json.dumps(child_cronplane_idle(sys.argv[2], float(sys.argv[3]))))
    elif len(sys.argv) > 1 and sys.argv[1] == "_apscheduler_idle":
        print(json.dumps(child_apscheduler_idle(int(sys.argv[2]), float(sys.argv[3]))))
    else:
        main()
