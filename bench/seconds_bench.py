"""Schedules in seconds (issue 16): quiet precision, sustained load and idle, real processes.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/seconds_bench.py                     # all three, 10 min windows
    .venv/bin/python bench/seconds_bench.py --quiet --minutes 2 # one benchmark, short
    .venv/bin/python bench/seconds_bench.py --sustained --no-pg --minutes 1

Three benchmarks (none selected: all three), each over a window of
--minutes, each on a fresh SQLite file and a fresh PostgreSQL database
(`cronplane_seconds_bench_<pid>` on --pg-admin, dropped at the end). Schedules are
seeded in SQL as the parser stores `every 10 seconds` (`@every 10s`,
anchored at the epoch: every schedule is due at each t with t mod 10 = 0, so
each instant is a burst of N), overlap `allow` (an item still queued never
turns an occurrence into a skip, so "missing" means the dispatcher missed
it), running the worker bench's no-op `python:` job.

- **--quiet**: 1,000 schedules in the installed `cronplane serve` (API,
  dispatcher, 2 workers, its defaults). Lateness = *item committed* −
  scheduled_for, where "committed" is when a poller in this process first
  sees the item (one indexed read every --poll-ms from each instant until
  all N are visible; an upper bound, at most one poll interval plus one read
  late). The dispatcher fires ahead (`--fire-ahead`, 0.25 s by default):
  an instant's items are committed before it, claimable from it, so a
  committed lateness is negative, down to −poll (the poller starts one poll
  before each instant). Also reported: the dispatcher's own view,
  created_at − scheduled_for (the instant it decided as of, the ledger's
  `late_ms`), and started_at − scheduled_for (when a worker started the
  item: what the user's job sees). Checked afterwards: every (schedule, instant) of the window
  has exactly one item and one fired event. Peer, same invocation, one at a
  time: APScheduler 3.11 BackgroundScheduler (memory store, its default
  10-thread pool and job defaults: coalesce, misfire_grace_time 1 s) with
  1,000 IntervalTrigger(seconds=10) jobs anchored at the same instants, in a
  child process; lateness = call time − scheduled run time (it has no queue:
  the call is its "item", reported in the started − due column, which is the
  like-for-like figure), missed = EVENT_JOB_MISSED + max-instances skips.
  Targets: committed p50 <= 10 ms, p99 <= 50 ms; started − due p50 <= 20 ms,
  p99 <= 100 ms; none missing, none twice.
- **--sustained**: 10,000 schedules (1,000 fires/s on average, 10,000 per
  instant) in the installed `cronplane dispatcher` (no workers: the
  dispatcher is what is measured, and on two shared cores 1,000 items/s of
  worker CPU would measure the worker instead; --sustained-serve runs
  `cronplane serve` with its workers). Lateness as above (--poll-ms
  coarser); "no drift": the last minute's committed-lateness p99 is no worse
  than the first minute's, within the resolution of one poll interval (the
  poller's own timing jitter is not the dispatcher's); the trend is the least-squares slope of each
  instant's last item (ms per minute), which one slow instant hardly moves.
  Dispatcher CPU (user+sys, /proc, its process tree) and RSS (VmHWM, VmRSS
  at the end). Target: p99 <= 1 s.
- **--idle**: 10,000 schedules whose earliest next_run is a minute after the
  window ends (so at least a minute away throughout) in `cronplane
  dispatcher`; its CPU over the window as a share of one core. Target < 1 %.

The load average is printed with every row: the machine may be shared.
Output: the rows as markdown tables ready to paste, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text

import machine
from cronplane.store.database import Database
from dispatch_bench import SEED_COLUMNS, STATES
from e2e_bench import free_port, peak_rss_mb, stop, wait_ready
from worker_bench import PG_ADMIN, fresh_postgres, register_noop, tree_cpu

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "worker_bench")

PG_NAME = "cronplane_seconds_bench"
BENCH = Path(__file__).resolve().parent
EVERY = 10  # seconds: `every 10 seconds`
TENANT = "bench"

# -- measuring (pure; tests/dispatch/test_seconds_bench.py) ----------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile (0 < q <= 1): the smallest value with >= q of them at or below."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def trend(lasts: Sequence[float | None], every: int = EVERY) -> float:
    """The least-squares slope of each instant's last item, in ms per minute.

    Drift shows as a slope; one slow instant in the first or the last minute
    moves the minutes' p99 (a maximum of six instants) but hardly the slope.
    """
    points = [(i * every / 60, 1000 * late) for i, late in enumerate(lasts) if late is not None]
    if len(points) < 2:
        return math.nan
    return statistics.linear_regression(*zip(*points, strict=True)).slope


def summary(values: Sequence[float]) -> dict[str, float]:
    """p50, p99 and max of lateness samples (seconds), in milliseconds."""
    return {
        "p50_ms": 1000 * percentile(values, 0.50),
        "p99_ms": 1000 * percentile(values, 0.99),
        "max_ms": 1000 * max(values) if values else math.nan,
        "samples": len(values),
    }


def instants(first: datetime, count: int, every: int = EVERY) -> list[datetime]:
    """`count` consecutive occurrences from `first`, `every` seconds apart."""
    return [first + timedelta(seconds=every * k) for k in range(count)]


def next_instant(after: float, every: int = EVERY) -> datetime:
    """The first epoch-anchored instant (t mod every = 0) at or after `after` (epoch s)."""
    return datetime.fromtimestamp(math.ceil(after / every) * every, UTC)


def occurrence_gaps(
    counts: Mapping[tuple[str, datetime], int],
    schedules: Collection[str],
    window: Sequence[datetime],
) -> tuple[int, int]:
    """(missing, twice): occurrences of the window with no record, and with more than one.

    `counts`: records per (schedule, instant); records outside the window or
    of other schedules are ignored.
    """
    missing = twice = 0
    for schedule in schedules:
        for instant in window:
            found = counts.get((schedule, instant), 0)
            missing += found == 0
            twice += found > 1
    return missing, twice


# -- the database side -------------------------------------------------------------


def sqlite_text(value: datetime) -> str:
    """A timestamp as SQLite stores it (naive UTC text, microseconds)."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def as_utc(value: Any) -> datetime:
    """A timestamp as read (text on SQLite, aware datetime on PostgreSQL) as aware UTC."""
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def seed(database: Database, n: int, next_run: datetime, cron: str = f"@every {EVERY}s") -> None:
    """N schedules `s0..s{N-1}` of the bench job, `cron`, overlap allow, due at `next_run`."""
    created = next_run - timedelta(hours=1)
    values: dict[str, Any] = {"n": n, "cron": cron, "created": created, "next": next_run}
    if database.dialect == "sqlite":
        values.update(created=sqlite_text(created), next=sqlite_text(next_run))
        sql = (
            "WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < :n - 1) "
            f"INSERT INTO schedules ({SEED_COLUMNS}) SELECT lower(hex(randomblob(16))), 'bench', "
            "'default', 'default', 's' || n, 'job', :cron, 'UTC', '{}', 'user', NULL, 'allow', "
            ":created, :created, 1, NULL, '[]' FROM seq"
        )
    else:
        sql = (
            f"INSERT INTO schedules ({SEED_COLUMNS}) SELECT gen_random_uuid(), 'bench', 'default', "
            "'default', 's' || n, 'job', :cron, 'UTC', '{}'::jsonb, 'user', NULL, 'allow', "
            ":created, :created, 1, NULL, '[]'::jsonb "
            "FROM generate_series(0, CAST(:n AS int) - 1) AS n"
        )
    with database.begin() as conn:
        conn.execute(text(sql), {k: v for k, v in values.items() if k != "next"})
        conn.execute(text(STATES), {"next": values["next"], "last": None})
    if database.dialect == "postgresql":
        with database.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")


class Poller:
    """Reads, on a connection of its own, how many bench items each instant has so far.

    One range read of ix_queue_items_tenant (tenant, created_at) from the
    oldest instant still open: an item's created_at is never before its
    scheduled_for, so nothing of an open instant is left out.
    """

    def __init__(self, url: str) -> None:
        self.sqlite = url.startswith("sqlite")
        if self.sqlite:
            self.conn: Any = sqlite3.connect(url.split("///", 1)[1], isolation_level=None)
            self.conn.execute("PRAGMA query_only = 1")
            self.sql = (
                "SELECT scheduled_for, count(*) FROM queue_items WHERE tenant = ? "
                "AND created_at >= ? GROUP BY scheduled_for"
            )
        else:
            import psycopg

            plain = url.replace("postgresql+psycopg://", "postgresql://")
            self.conn = psycopg.connect(plain, autocommit=True)
            self.sql = (
                "SELECT scheduled_for, count(*) FROM queue_items WHERE tenant = %s "
                "AND created_at >= %s GROUP BY scheduled_for"
            )

    def counts(self, floor: datetime) -> list[tuple[datetime, int]]:
        bound: Any = sqlite_text(floor) if self.sqlite else floor
        rows = self.conn.execute(self.sql, (TENANT, bound)).fetchall()
        return [(as_utc(when), int(count)) for when, count in rows]

    def backends(self) -> list[int]:
        """PostgreSQL: the server processes of this database's other connections."""
        if self.sqlite:
            return []
        sql = (
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return [int(pid) for (pid,) in self.conn.execute(sql).fetchall()]

    def close(self) -> None:
        self.conn.close()


def server_cpu(poller: Poller) -> float:
    """User+sys CPU seconds of the PostgreSQL backends serving cronplane (0 on SQLite).

    Read from /proc (the server is local); a backend that exits in between
    takes its seconds with it, which the product's pooled connections do not.
    """
    return sum(tree_cpu(pid) for pid in poller.backends())


def watch(
    poller: Poller, window: Sequence[datetime], n: int, poll_s: float, give_up_s: float
) -> dict[datetime, list[float]]:
    """Per instant of the window, the committed lateness (s) of each of its items seen.

    From just before each instant, poll every `poll_s` until its N items are
    visible (or `give_up_s` after it). An item counts as committed at the
    start of the first read that sees it (the read's snapshot is taken then).
    """
    samples: dict[datetime, list[float]] = {t: [] for t in window}
    seen: dict[datetime, int] = defaultdict(int)
    pending = sorted(window)
    opened: list[datetime] = []
    while pending or opened:
        now = time.time()
        while pending and pending[0].timestamp() <= now + poll_s:
            opened.append(pending.pop(0))
        if not opened:
            time.sleep(max(0.0, pending[0].timestamp() - poll_s - time.time()))
            continue
        started = time.time()
        for instant, count in poller.counts(min(opened)):
            if instant in samples and count > seen[instant]:
                late = started - instant.timestamp()
                samples[instant].extend([late] * (count - seen[instant]))
                seen[instant] = count
        opened = [t for t in opened if seen[t] < n and started < t.timestamp() + give_up_s]
        time.sleep(poll_s)
    return samples


def recorded(database: Database) -> tuple[dict[tuple[str, datetime], int], ...]:
    """(items, fired events) per (schedule, scheduled_for), the bench tenant's."""
    found = []
    for sql in (
        "SELECT schedule_id, scheduled_for, count(*) FROM queue_items "
        "WHERE tenant = 'bench' AND source = 'schedule' GROUP BY schedule_id, scheduled_for",
        "SELECT schedule_id, scheduled_for, count(*) FROM events WHERE tenant = 'bench' "
        "AND code = 'V200610SCHTRG' GROUP BY schedule_id, scheduled_for",
    ):
        with database.read() as conn:
            rows = conn.exec_driver_sql(sql).all()
        found.append({(str(sid), as_utc(when)): int(count) for sid, when, count in rows})
    return found[0], found[1]


def succeeded_in(database: Database, window: Sequence[datetime]) -> int:
    """The window's bench items that a worker ran to success."""
    bounds: dict[str, Any] = {"first": min(window), "last": max(window)}
    if database.dialect == "sqlite":
        bounds = {key: sqlite_text(value) for key, value in bounds.items()}
    sql = (
        "SELECT count(*) FROM queue_items WHERE tenant = 'bench' AND status = 'succeeded' "
        "AND scheduled_for >= :first AND scheduled_for <= :last"
    )
    with database.read() as conn:
        return int(conn.execute(text(sql), bounds).scalar_one())


def schedule_ids(database: Database) -> list[str]:
    with database.read() as conn:
        sql = "SELECT id FROM schedules WHERE tenant = 'bench'"
        return [str(row[0]) for row in conn.exec_driver_sql(sql)]


def lateness_of(database: Database, window: Sequence[datetime], column: str) -> list[float]:
    """`column` − scheduled_for (s) of the window's items: created_at is the instant the
    dispatcher decided as of (its own clock), started_at when a worker started the item."""
    return [late for _, late in lateness_by_instant(database, window, column)]


def lateness_by_instant(
    database: Database, window: Sequence[datetime], column: str
) -> list[tuple[datetime, float]]:
    """(scheduled_for, `column` − scheduled_for in s) of the window's items."""
    first, last = min(window), max(window)
    with database.read() as conn:
        sql = (
            f"SELECT {column}, scheduled_for FROM queue_items WHERE tenant = 'bench' "
            "AND source = 'schedule' AND scheduled_for >= :first AND scheduled_for <= :last "
            f"AND {column} IS NOT NULL"
        )
        bounds: dict[str, Any] = {"first": first, "last": last}
        if database.dialect == "sqlite":
            bounds = {"first": sqlite_text(first), "last": sqlite_text(last)}
        rows = conn.execute(text(sql), bounds).all()
    return [(as_utc(s), (as_utc(c) - as_utc(s)).total_seconds()) for c, s in rows]


def started_instants(
    by_instant: Sequence[tuple[datetime, float]], window: Sequence[datetime]
) -> list[list[float]]:
    """Each instant's started − due p50 and max (ms), in the window's order."""
    grouped: dict[float, list[float]] = defaultdict(list)
    for due, late in by_instant:
        grouped[due.timestamp()].append(late)
    figures = [summary(grouped[t.timestamp()]) for t in window if grouped[t.timestamp()]]
    return [[round(f["p50_ms"], 1), round(f["max_ms"], 1)] for f in figures]


def leader_held(database: Database) -> bool:
    with database.read() as conn:
        sql = "SELECT count(*) FROM leases WHERE holder IS NOT NULL"
        return bool(conn.exec_driver_sql(sql).scalar())


# -- processes ---------------------------------------------------------------------


def start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """The installed `cronplane` (beside this interpreter) in a process group of its own."""
    env = dict(os.environ)
    # The no-op job is `python:worker_bench:noop`: the bench dir must be importable.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), env.get("PYTHONPATH")) if p)
    with log.open("w") as out:
        return subprocess.Popen(
            [str(Path(sys.executable).with_name("cronplane")), *command],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )


def wait_leader(database: Database, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not leader_held(database):
        if process.poll() is not None:
            raise RuntimeError(f"cronplane exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no dispatcher took the lease within {timeout:.0f} s")
        time.sleep(0.1)


def rss_now_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def load() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


@dataclass
class Run:
    """One system's figures for one benchmark."""

    bench: str
    system: str
    n: int
    minutes: float
    figures: dict[str, Any] = field(default_factory=dict)


def fresh(kind: str, workdir: Path, args: argparse.Namespace, tag: str) -> str:
    """A migrated database with the bench job: a new SQLite file, or PostgreSQL recreated."""
    if kind == "sqlite":
        url = f"sqlite:///{workdir / f'{tag}.db'}"
    else:
        url = fresh_postgres(args.pg_admin, PG_NAME)
    register_noop(url)
    return url


def fire_run(
    kind: str, n: int, command: list[str], args: argparse.Namespace, workdir: Path, tag: str
) -> dict[str, Any]:
    """N schedules every 10 s under a `cronplane` process for the window; its figures."""
    url = fresh(kind, workdir, args, tag)
    database = Database(url)
    count = max(1, round(args.minutes * 60 / EVERY))
    first = next_instant(time.time() + args.lead + n / 2_000)
    window = instants(first, count)
    seed(database, n, first)
    log = workdir / f"{tag}-{kind}.log"
    poller = Poller(url)
    port = free_port()
    options = ["--port", str(port)] if command[0] == "serve" else []
    extra = shlex.split(args.cronplane_args)
    process = start([*command, "--db", url, *options, *extra], log)
    try:
        if command[0] == "serve":
            wait_ready(process, port, timeout=60)
        wait_leader(database, process, timeout=60)
        ahead = first.timestamp() - time.time()
        assert ahead > 0.5, f"ready {-ahead:.1f} s after the first instant: raise --lead"
        time.sleep(ahead - 0.5)
        cpu, server = tree_cpu(process.pid), server_cpu(poller)
        samples = watch(poller, window, n, args.poll_ms / 1000, give_up_s=EVERY * 3)
        cpu, server = tree_cpu(process.pid) - cpu, server_cpu(poller) - server
        rss_peak, rss_end = peak_rss_mb(process.pid), rss_now_mb(process.pid)
        if process.poll() is not None:
            raise RuntimeError(f"cronplane exited with {process.returncode}; see {log}")
        time.sleep(1)  # stragglers of the last instant, for the exactly-once check
        succeeded = None
        if command[0] == "serve":  # its workers: give them a few seconds for the last burst
            deadline = time.monotonic() + EVERY
            while (succeeded := succeeded_in(database, window)) < n * count:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
    finally:
        stop(process)
        poller.close()
    items, fired = recorded(database)
    ids = schedule_ids(database)
    decided = lateness_of(database, window, "created_at")
    serve = command[0] == "serve"
    by_instant = lateness_by_instant(database, window, "started_at") if serve else []
    started = [late for _, late in by_instant]
    database.dispose()
    elapsed = window[-1].timestamp() - first.timestamp() + EVERY
    committed = [late for t in window for late in samples[t]]
    per_minute = 60 // EVERY
    missing, twice = occurrence_gaps(items, ids, window)
    events_missing, events_twice = occurrence_gaps(fired, ids, window)
    return {
        "occurrences": n * count,
        "missing": missing,
        "twice": twice,
        "events_missing": events_missing,
        "events_twice": events_twice,
        "succeeded": succeeded,
        "committed": summary(committed),
        # The last item of each instant, in order: drift or one bad instant?
        "instant_max_ms": [
            round(1000 * max(samples[t]), 1) if samples[t] else None for t in window
        ],
        "decided": summary(decided),
        "started": summary(started),
        # Each instant's started − due p50 / max (ms), in order: one bad instant or all?
        "started_instants": started_instants(by_instant, window),
        "first_minute_p99_ms": summary([late for t in window[:per_minute] for late in samples[t]])[
            "p99_ms"
        ],
        "last_minute_p99_ms": summary([late for t in window[-per_minute:] for late in samples[t]])[
            "p99_ms"
        ],
        "trend_ms_per_min": trend([max(samples[t]) if samples[t] else None for t in window]),
        # The resolution of "committed": an item is seen at the start of a poll.
        "poll_ms": args.poll_ms,
        "cpu_s": cpu,
        "cpu_pct": 100 * cpu / elapsed,
        "server_cpu_s": server if kind == "postgres" else None,
        "rss_peak_mb": rss_peak,
        "rss_end_mb": rss_end,
        "load": load(),
    }


def idle_run(
    kind: str, n: int, args: argparse.Namespace, workdir: Path, tag: str
) -> dict[str, Any]:
    """A dispatcher whose earliest next_run stays at least a minute away: its CPU."""
    url = fresh(kind, workdir, args, tag)
    database = Database(url)
    seconds = args.minutes * 60
    warmup = 5.0  # start-up (imports, migrations check, lease) is not idling
    seed(database, n, next_instant(time.time() + warmup + seconds + 60 + args.lead))
    log = workdir / f"{tag}-{kind}.log"
    process = start(["dispatcher", "--db", url], log)
    try:
        wait_leader(database, process, timeout=60)
        time.sleep(warmup)
        cpu = tree_cpu(process.pid)
        time.sleep(seconds)
        cpu = tree_cpu(process.pid) - cpu
        rss = rss_now_mb(process.pid)
        if process.poll() is not None:
            raise RuntimeError(f"cronplane exited with {process.returncode}; see {log}")
    finally:
        stop(process)
    with database.read() as conn:
        fired = conn.exec_driver_sql("SELECT count(*) FROM queue_items WHERE tenant = 'bench'")
        assert fired.scalar() == 0, "a schedule fired during the idle window"
    database.dispose()
    return {"cpu_s": cpu, "cpu_pct": 100 * cpu / seconds, "rss_mb": rss, "load": load()}


# -- APScheduler, in a child process -----------------------------------------------


def aps_job() -> float:
    """The peer's no-op job: returns when it was called (the executed event carries it)."""
    return time.time()


def child_apscheduler(n: int, minutes: float, lead: float) -> dict[str, Any]:
    from apscheduler.events import (
        EVENT_JOB_EXECUTED,
        EVENT_JOB_MAX_INSTANCES,
        EVENT_JOB_MISSED,
        JobEvent,
    )
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.triggers.interval import IntervalTrigger

    count = max(1, round(minutes * 60 / EVERY))
    first = next_instant(time.time() + lead)
    window = instants(first, count)
    calls: dict[tuple[str, datetime], int] = defaultdict(int)
    lateness: list[float] = []  # of the window's calls
    skipped = 0

    def listen(event: JobEvent) -> None:
        nonlocal skipped
        if event.code == EVENT_JOB_EXECUTED:
            due = event.scheduled_run_time.astimezone(UTC)
            calls[(event.job_id, due)] += 1
            if first <= due <= window[-1]:
                lateness.append(event.retval - due.timestamp())
        else:
            skipped += 1

    scheduler = BackgroundScheduler(timezone="UTC")  # its defaults: 10 threads, memory store
    scheduler.add_listener(listen, EVENT_JOB_EXECUTED | EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    scheduler.start()
    trigger = IntervalTrigger(seconds=EVERY, start_date=first, timezone="UTC")
    for i in range(n):
        scheduler.add_job(aps_job, trigger, id=f"j{i}")
    cpu = time.process_time()
    time.sleep(max(0.0, window[-1].timestamp() + 1.5 - time.time()))
    cpu = time.process_time() - cpu
    scheduler.shutdown(wait=True)
    missing, twice = occurrence_gaps(calls, [f"j{i}" for i in range(n)], window)
    elapsed = window[-1].timestamp() - first.timestamp() + EVERY
    return {
        "occurrences": n * count,
        "missing": missing,
        "twice": twice,
        "missed_events": skipped,
        # Its call is when the user's job starts: the like-for-like of our started − due.
        "started": summary(lateness),
        "cpu_s": cpu,
        "cpu_pct": 100 * cpu / elapsed,
        "rss_peak_mb": peak_rss_mb(os.getpid()),
        "load": load(),
    }


def in_child(*args: str) -> dict[str, Any]:
    """This script's hidden command `args[0]` in a child process (machine.in_child)."""
    return machine.in_child(__file__, *args)


# -- tables ------------------------------------------------------------------------


def ms(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:,.1f}"


def lateness_cell(figures: dict[str, Any], key: str) -> str:
    if key not in figures:
        return "—"
    s = figures[key]
    return f"{ms(s['p50_ms'])} / {ms(s['p99_ms'])} / {ms(s['max_ms'])}"


QUIET_HEAD = (
    "| system | N | window (min) | occurrences | missing | twice "
    "| committed − due p50 / p99 / max (ms) | decided (created_at) − due p50 / p99 / max (ms) "
    "| started − due p50 / p99 / max (ms) | succeeded (workers) | CPU s (% of a core) [+ PostgreSQL backends s] | RSS MB peak | load 1/5/15 at end |\n"
    "|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---|"
)
SUSTAINED_HEAD = (
    "| system | N | window (min) | occurrences | missing | twice "
    "| committed − due p50 / p99 / max (ms) | first-minute p99 (ms) | last-minute p99 (ms) "
    "| no drift | trend (ms/min) | dispatcher CPU s (% of a core) [+ PostgreSQL backends s] | RSS MB peak / end | load 1/5/15 at end |\n"
    "|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|"
)
IDLE_HEAD = (
    "| system | schedules | window (min) | CPU s | CPU % of a core | RSS MB | load 1/5/15 at end |\n"
    "|---|---:|---:|---:|---:|---:|---|"
)


def row(run: Run) -> str:
    f = run.figures
    if run.bench == "idle":
        return (
            f"| {run.system} | {run.n:,} | {run.minutes:g} | {f['cpu_s']:.2f} | "
            f"{f['cpu_pct']:.2f} | {f['rss_mb']:.0f} | {f['load']} |"
        )
    missing = f"{f['missing']:,}" + (
        f" (+{f['missed_events']:,} missed events)" if "missed_events" in f else ""
    )
    if "events_missing" in f and (f["events_missing"] or f["events_twice"]):
        missing += f" (events: {f['events_missing']:,} missing, {f['events_twice']:,} twice)"
    cpu = f"{f['cpu_s']:.1f} ({f['cpu_pct']:.1f} %)"
    if f.get("server_cpu_s") is not None:
        cpu += f" + PostgreSQL {f['server_cpu_s']:.1f}"
    common = (
        f"| {run.system} | {run.n:,} | {run.minutes:g} | {f['occurrences']:,} | {missing} | "
        f"{f['twice']:,} | {lateness_cell(f, 'committed')} |"
    )
    if run.bench == "quiet":
        ran = "—" if f.get("succeeded") is None else f"{f['succeeded']:,}"
        return (
            f"{common} {lateness_cell(f, 'decided')} | {lateness_cell(f, 'started')} | {ran} | {cpu} | {f['rss_peak_mb']:.0f} | "
            f"{f['load']} |"
        )
    first, last = f["first_minute_p99_ms"], f["last_minute_p99_ms"]
    # Within the measurement's resolution: items committed before an instant's
    # first poll all read as that poll's start, whichever minute they are in.
    drift = "yes" if last <= first + f.get("poll_ms", 0) else "no"
    return (
        f"{common} {ms(first)} | {ms(last)} | {drift} | {f['trend_ms_per_min']:+.1f} | {cpu} | "
        f"{f['rss_peak_mb']:.0f} / {f['rss_end_mb']:.0f} | {f['load']} |"
    )


def started_ratios(runs: Sequence[Run]) -> list[str]:
    """Each quiet cronplane run's started − due against APScheduler's call − due (the same
    column): the job's own start, like for like."""
    quiet = [r for r in runs if r.bench == "quiet" and "started" in r.figures]
    peers = [r for r in quiet if r.system.startswith("APScheduler")]
    if not peers:
        return []
    peer = peers[-1].figures["started"]
    lines = ["", "started − due, cronplane ÷ APScheduler call − due (p50, p99):"]
    for r in quiet:
        if r in peers:
            continue
        ours = r.figures["started"]
        cells = [
            f"{ours[q]:.1f} / {peer[q]:.1f} ms = {ours[q] / peer[q]:.2f}" if peer[q] else "—"
            for q in ("p50_ms", "p99_ms")
        ]
        lines.append(f"- {r.system}: p50 {cells[0]}; p99 {cells[1]}")
    return lines


# -- the run -----------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quiet", action="store_true", help="quiet precision (1,000, serve)")
    parser.add_argument("--sustained", action="store_true", help="10,000 every 10 s")
    parser.add_argument("--idle", action="store_true", help="earliest next_run a minute away")
    parser.add_argument("--minutes", type=float, default=10.0, help="each window (default 10)")
    parser.add_argument("--quiet-schedules", type=int, default=1_000)
    parser.add_argument("--sustained-schedules", type=int, default=10_000)
    parser.add_argument("--idle-schedules", type=int, default=10_000)
    parser.add_argument(
        "--quiet-dispatcher",
        action="store_true",
        help="quiet through `cronplane dispatcher` alone (no API, no workers), not `serve`",
    )
    parser.add_argument(
        "--sustained-serve",
        action="store_true",
        help="sustained through `cronplane serve` (with its workers), not `cronplane dispatcher`",
    )
    parser.add_argument(
        "--cronplane-args",
        default="",
        help="options added to the quiet and sustained `cronplane serve|dispatcher` command",
    )
    parser.add_argument("--poll-ms", type=float, default=None, help="default 2 quiet, 20 sustained")
    parser.add_argument("--lead", type=float, default=8.0, help="seconds from seeding to start")
    parser.add_argument("--no-aps", action="store_true", help="skip the APScheduler peer")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    args = parser.parse_args()
    chosen = [b for b in ("quiet", "sustained", "idle") if getattr(args, b)] or [
        "quiet",
        "sustained",
        "idle",
    ]
    kinds = ([] if args.no_sqlite else ["sqlite"]) + ([] if args.no_pg else ["postgres"])
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-seconds-bench-"))
    print(machine.header("seconds bench"), flush=True)
    runs: list[Run] = []
    poll_given = args.poll_ms
    try:
        for bench in chosen:
            head = {"quiet": QUIET_HEAD, "sustained": SUSTAINED_HEAD, "idle": IDLE_HEAD}[bench]
            print(f"\n## {bench}\n\n{head}", flush=True)
            for kind in kinds:
                if bench == "idle":
                    n = args.idle_schedules
                    figures = idle_run(kind, n, args, workdir, bench)
                    system = f"cronplane dispatcher ({kind})"
                else:
                    quiet = bench == "quiet"
                    n = args.quiet_schedules if quiet else args.sustained_schedules
                    args.poll_ms = poll_given or (2.0 if quiet else 20.0)
                    serve = not args.quiet_dispatcher if quiet else args.sustained_serve
                    command = ["serve"] if serve else ["dispatcher"]
                    figures = fire_run(kind, n, command, args, workdir, bench)
                    system = f"cronplane {command[0]} ({kind})"
                runs.append(Run(bench, system, n, args.minutes, figures))
                print(row(runs[-1]), flush=True)
            if bench == "quiet" and not args.no_aps:
                import apscheduler

                n = args.quiet_schedules
                figures = in_child("_aps", str(n), str(args.minutes), str(args.lead))
                system = f"APScheduler {apscheduler.__version__} BackgroundScheduler (memory)"
                runs.append(Run(bench, system, n, args.minutes, figures))
                print(row(runs[-1]), flush=True)
                for line in started_ratios(runs):
                    print(line)
        print(f"\n# load average at end: {load()}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"bench": "seconds", "runs": [run.__dict__ for run in runs]}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_aps":
        result = child_apscheduler(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
        print(json.dumps(result))
    else:
        main()
