"""Worker benchmark: the built-in worker (SQLite, PostgreSQL) against a Celery worker.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/worker_bench.py                       # full run (~11 min, 2 busy CPUs)
    .venv/bin/python bench/worker_bench.py --items 2000 --depths 100,10000

Every system in the same run (the machine's speed drifts), each in fresh processes:

- **throughput**: N queued no-op `python:worker_bench:noop` items (seeded in
  SQL); 1 and 2 worker processes, each looping `Worker(database,
  SystemClock(), heartbeat=True, concurrency=C, claim_batch=B).run_once()`
  (what `cronplane worker --concurrency C --claim-batch B` runs; the
  defaults are the command's) until the queue is empty. They import and connect,
  then start together on a "go" line. items/s = N / (last `finished_at` -
  go); CPU = the workers' user+sys from go to their end (not the database
  server's), per item. Checked: every item `succeeded` at its first attempt,
  one success event each, and the runs each worker reports (its
  success events) add up to N.
- **claim cost**: D queued items (one queue deepened through --depths), then
  K `store.queue.claim(conn, worker, now, lease)` calls, each alone in
  `database.begin()` and **rolled back**, so every claim sees depth D (kept
  claims would drain a depth-100 queue). The claim call is timed (mean,
  p99) and so is the whole transaction (BEGIN, claim, ROLLBACK; mean).
- **Celery peer**: a real `celery worker` subprocess, Redis broker on a db of
  its own (flushed before and after), prefork pool x2 then threads x8. Its
  task INCRs a Redis counter, which is how we learn it ran (so it is a
  little heavier than our no-op). After a warm-up, this process sends N
  tasks (`send_task`, ignore_result=True); tasks/s = N / (first send ->
  counter at N); CPU = the worker's process tree (/proc), not Redis's.

SQLite is a temp file (WAL); PostgreSQL a database `cronplane_worker_bench_<pid>`
made on --pg-admin (unique to the run, dropped at its end). Loopback servers only; every wait is bounded, and every
subprocess is stopped when the bench ends or fails.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, timedelta
from pathlib import Path
from select import select as readable
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from sqlalchemy import func, select, text

import machine
from cronplane import events as ev
from cronplane.clock import SystemClock
from cronplane.processes.worker import DEFAULT_CLAIM_BATCH, Worker
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.tables import events, queue_items
from machine import fresh_postgres, tree_cpu

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "worker_bench")

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PG_NAME = "cronplane_worker_bench"
REDIS = "redis://127.0.0.1:6379"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
TARGET = "python:worker_bench:noop"
CELERY_TASK, CELERY_QUEUE, COUNTER = "worker_bench.noop", "worker_bench", "worker_bench:done"
WARMUP = 5


# The mixed workload's own observations: item number -> (invoked, returned), by this
# process's clock (time.time), written by the target itself.
OBSERVED: dict[int, tuple[float, float]] = {}


def noop(payload: dict[str, Any], context: Any) -> None:
    """The job every bench item runs: nothing; in the mixed workload, it notes when it
    was invoked and returned, and a slow item sleeps `sleep` seconds first."""
    if "n" not in payload:
        return
    invoked = time.time()
    if payload.get("sleep"):
        time.sleep(payload["sleep"])
    OBSERVED[payload["n"]] = (invoked, time.time())


# -- seeding ----------------------------------------------------------------------

_ITEM_COLUMNS = (
    "id, tenant, stack, environment, job, payload, source, schedule_id, scheduled_for, "
    "priority, status, available_at, expires_at, attempts, max_attempts, lease_owner, "
    "heartbeat_at, lease_expires_at, result, error, created_at, started_at, finished_at, "
    "updated_at"
)


def _stamp(database: Database) -> Any:
    """How a timestamp is bound in raw SQL: naive UTC text on SQLite, itself on PostgreSQL."""
    if database.dialect != "sqlite":
        return lambda value: value
    return lambda value: value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def seed(database: Database, start: int, stop: int, numbered: bool = False) -> None:
    """Queue items start..stop-1 in SQL (priority 0, available in order, none expiring);
    `numbered`: each item's payload is {"n": its place in the queue}.

    From 0, the queue and the events are emptied first.
    """
    now, stamp = SystemClock().now(), _stamp(database)
    # available_at = base + n seconds, all in the past; expiry hours ahead.
    base, expires = now.replace(microsecond=0) - timedelta(days=2), now + timedelta(hours=5)
    params = {"start": start, "stop": stop, "base": stamp(base), "expires": stamp(expires)}
    payload = "'{\"n\": ' || n || '}'" if numbered else "'{}'"
    with database.begin() as conn:
        if start == 0:
            conn.execute(text("DELETE FROM queue_items"))
            conn.execute(text("DELETE FROM events"))
        if database.dialect == "sqlite":
            sql = (
                "WITH RECURSIVE seq(n) AS (SELECT :start UNION ALL SELECT n + 1 FROM seq "
                f"WHERE n < :stop - 1) INSERT INTO queue_items ({_ITEM_COLUMNS}) "
                "SELECT lower(hex(randomblob(16))), 'bench', 'default', 'default', 'job', "
                f"{payload}, 'api', NULL, NULL, 0, 'queued', "
                "strftime('%Y-%m-%d %H:%M:%S', :base, '+' || n || ' seconds') || '.000000', "
                ":expires, 0, 1, NULL, NULL, NULL, NULL, NULL, :base, NULL, NULL, :base FROM seq"
            )
        else:
            sql = (
                f"INSERT INTO queue_items ({_ITEM_COLUMNS}) SELECT gen_random_uuid(), "
                f"'bench', 'default', 'default', 'job', CAST({payload} AS jsonb), 'api', NULL, NULL, 0, "
                "'queued', CAST(:base AS timestamptz) + n * interval '1 second', :expires, "
                "0, 1, NULL, NULL, NULL, NULL, NULL, :base, NULL, NULL, :base "
                "FROM generate_series(CAST(:start AS int), CAST(:stop AS int) - 1) AS n"
            )
        if stop > start:
            conn.execute(text(sql), params)
    if database.dialect == "postgresql":
        with database.engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "VACUUM ANALYZE queue_items"
            )


def register_noop(url: str) -> None:
    """Migrate the database and register job `bench/job`, the `python:` no-op of this file."""
    database = Database(url)
    database.upgrade()
    job = "0" * 32 if database.dialect == "sqlite" else str(UUID(int=0))
    with database.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO jobs (id, tenant, stack, name, title, kind, status, payload, "
                "payload_schema, target, options, source, created_at, updated_at, revision) "
                "VALUES (:id, 'bench', 'default', 'job', 'bench', 'python', 'active', '{}', "
                "NULL, :target, '{}', 'user', :now, :now, 1)"
            ),
            {"id": job, "target": TARGET, "now": _stamp(database)(SystemClock().now())},
        )
    database.dispose()


def databases(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    """database name → URL, each migrated and holding the bench job (`python:` no-op)."""
    urls = {"sqlite": f"sqlite:///{workdir / 'worker-bench.db'}"}
    if not args.no_pg:
        urls["postgres"] = fresh_postgres(args.pg_admin, PG_NAME)
    for url in urls.values():
        register_noop(url)
    return urls


# -- children -----------------------------------------------------------------------


def child_work(url: str, concurrency: int, claim_batch: int, pool: str) -> dict[str, Any]:
    """Import, connect, say ready; on "go", run items until the queue is empty."""
    # The target `python:worker_bench:noop` is this file, imported by its name (not as
    # __main__), as the worker resolves it: the allowed-module check (CRONPLANE_PYTHON_TARGETS)
    # looks at the module a callable was defined in.
    import worker_bench

    database = Database(url)
    worker = Worker(
        database,
        SystemClock(),
        heartbeat=True,
        concurrency=concurrency,
        claim_batch=claim_batch,
        pool=pool,
    )
    database.engine.connect().close()  # a pooled connection before the clock starts
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return {"claimed": 0, "cpu_s": 0.0}
    cpu = time.process_time()  # user+sys of every thread (heartbeats too)
    # What `cronplane worker` runs: Worker.run(), stopped once nothing is left.
    runner = threading.Thread(target=worker.run)
    runner.start()
    while True:
        time.sleep(0.02)
        with database.read() as conn:
            if not conn.execute(text(LEFT)).scalar_one():
                break
    worker.stop()
    runner.join()
    cpu = time.process_time() - cpu
    worker.close()
    with database.read() as conn:  # what this worker ran: its success events
        claimed = conn.execute(
            select(func.count()).where(events.c.actor == f"worker:{worker.name}")
        ).scalar_one()
    return {"claimed": claimed, "cpu_s": cpu, "observed": worker_bench.OBSERVED}


LEFT = "SELECT count(*) FROM queue_items WHERE status IN ('queued', 'running')"


class _Rollback(Exception):
    """Raised inside `database.begin()` to undo a timed claim."""


def child_claims(url: str, k: int) -> dict[str, float]:
    """Time k claims, each alone in a transaction that is rolled back."""
    database = Database(url)
    clock, lease = SystemClock(), timedelta(seconds=300)
    claims: list[float] = []
    transactions: list[float] = []
    for i in range(WARMUP + k):
        started = time.perf_counter()
        with contextlib.suppress(_Rollback), database.begin() as conn:
            before = time.perf_counter()
            item = queue.claim(conn, "bench-claims", clock.now(), lease)
            claimed = time.perf_counter() - before
            assert item is not None, "nothing to claim"
            raise _Rollback
        if i >= WARMUP:
            claims.append(claimed)
            transactions.append(time.perf_counter() - started)
    return {
        "mean_ms": statistics.fmean(claims) * 1000,
        "p99_ms": sorted(claims)[min(k - 1, int(0.99 * k))] * 1000,
        "tx_mean_ms": statistics.fmean(transactions) * 1000,
    }


Child = tuple[subprocess.Popen[str], Path]


def _spawn(workdir: Path, *args: str, stdin: bool = False) -> Child:
    """This file as a child, and its stderr's file (a full pipe would stall it)."""
    log = workdir / f"child-{args[0]}-{time.monotonic_ns()}.log"
    with log.open("w") as stderr:
        child = subprocess.Popen(
            [sys.executable, __file__, *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    return child, log


def _result(spawned: Child, timeout: float) -> dict[str, Any]:
    """The child's last stdout line as JSON; killed when past `timeout`."""
    child, log = spawned
    try:
        out, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate(timeout=10)
        raise RuntimeError(f"child {child.args} took longer than {timeout:.0f}s") from None
    if child.returncode != 0:
        raise RuntimeError(f"child {child.args} failed:\n{log.read_text()[-2000:]}")
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return figures


# -- cronplane --------------------------------------------------------------------


CHECK = (  # items; items succeeded at their first attempt; success events; their items
    "SELECT (SELECT count(*) FROM queue_items), (SELECT count(*) FROM queue_items WHERE "
    "status = 'succeeded' AND attempts = 1), count(*), count(DISTINCT item_id) FROM events "
    "WHERE code = :code"
)


def run_workers(
    url: str, processes: int, workdir: Path, worker: tuple[int, int, str], timeout: float
) -> tuple[float, list[dict[str, Any]]]:
    """Start `processes` fresh workers together on "go"; the go time and each one's figures."""
    options = [str(option) for option in worker]
    children = [_spawn(workdir, "_work", url, *options, stdin=True) for _ in range(processes)]
    try:
        for child, _ in children:
            assert child.stdout is not None
            ready, _, _ = readable([child.stdout], [], [], 60)
            if not ready or child.stdout.readline().strip() != "ready":
                raise RuntimeError("a worker child did not get ready within 60 s")
        started = time.time()
        for child, _ in children:
            print("go", file=child.stdin, flush=True)
        return started, [_result(spawned, timeout) for spawned in children]
    finally:
        for child, _ in children:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=10)


def throughput(
    url: str, n: int, processes: int, workdir: Path, worker: tuple[int, int, str]
) -> dict[str, float]:
    """N items through `processes` fresh workers (concurrency, claim batch, pool); items/s, CPU."""
    database = Database(url)
    seed(database, 0, n)
    started, results = run_workers(url, processes, workdir, worker, timeout=60 + n / 20)
    with database.read() as conn:
        # When the last outcome was written (finished_at is when a target returned).
        last = conn.execute(select(func.max(queue_items.c.updated_at))).scalar_one()
        check = conn.execute(text(CHECK), {"code": ev.ITEM_SUCCEEDED.text}).one()
    total, once, events, distinct = check
    database.dispose()
    claimed = sum(int(r["claimed"]) for r in results)
    assert total == once == n, f"{once} of {total} items succeeded at the first attempt, not {n}"
    assert events == distinct == n, f"{events} success events for {distinct} items, not {n}"
    assert claimed == n, f"the workers claimed {claimed} items, not {n}"
    wall = last.timestamp() - started
    cpu = sum(r["cpu_s"] for r in results)
    return {"items_per_s": n / wall, "wall_s": wall, "cpu_ms_per_item": 1000 * cpu / n}


def _slow_items(database: Database, every: int, seconds: float) -> None:
    """Make every `every`-th item (from the middle of the first stretch) sleep `seconds`."""
    if database.dialect == "sqlite":
        sql = (
            "UPDATE queue_items SET payload = json_set(payload, '$.sleep', :seconds) "
            "WHERE json_extract(payload, '$.n') % :every = :every / 2"
        )
    else:
        sql = (
            "UPDATE queue_items SET payload = payload || jsonb_build_object('sleep', "
            "CAST(:seconds AS float)) WHERE CAST(payload->>'n' AS int) % :every = :every / 2"
        )
    with database.begin() as conn:
        conn.execute(text(sql), {"every": every, "seconds": seconds})


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def mixed(
    url: str,
    n: int,
    slow: int,
    seconds: float,
    processes: int,
    workdir: Path,
    worker: tuple[int, int, str],
) -> dict[str, float]:
    """`slow` items sleeping `seconds` spread among N no-ops; timings by the targets' own
    clock: how soon everything and the no-ops were done, the longest stretch with no
    no-op starting (a stall behind slow items), and how long a no-op waited after one
    queued behind it had started (an item held behind a slow one)."""
    database = Database(url)
    seed(database, 0, n, numbered=True)
    _slow_items(database, n // slow, seconds)
    go, results = run_workers(url, processes, workdir, worker, timeout=120 + n / 20)
    observed: dict[int, tuple[float, float]] = {}
    for r in results:
        observed.update({int(k): (v[0], v[1]) for k, v in r["observed"].items()})
    with database.read() as conn:
        rows = conn.execute(
            select(queue_items.c.payload, queue_items.c.started_at, queue_items.c.finished_at)
        ).all()
        check = conn.execute(text(CHECK), {"code": ev.ITEM_SUCCEEDED.text}).one()
    database.dispose()
    assert tuple(check) == (n, n, n, n), f"items, succeeded once, events, their items: {check}"
    assert len(observed) == n, f"{len(observed)} items observed running, not {n}"
    slow_ones = {int(p["n"]) for p, _, _ in rows if p.get("sleep")}
    noops = [k for k in range(n) if k not in slow_ones]
    # A no-op "overtaken": one queued behind it started first; how long it then waited.
    waits, earliest_later = [], float("inf")
    for k in reversed(noops):
        waits.append(max(0.0, observed[k][0] - earliest_later))
        earliest_later = min(earliest_later, observed[k][0])
    # A stall: the longest stretch in which no no-op started while some still waited.
    starts = sorted(observed[k][0] for k in noops)
    gap = max((b - a for a, b in itertools.pairwise(starts)), default=0.0)
    # The record against the targets' own clock: started_at / finished_at vs invoked / returned.
    off = [
        max(abs(s.timestamp() - observed[p["n"]][0]), abs(f.timestamp() - observed[p["n"]][1]))
        for p, s, f in rows
    ]
    recorded = [f.timestamp() - s.timestamp() for p, s, f in rows if p.get("sleep")]
    return {
        "all_done_s": max(v[1] for v in observed.values()) - go,
        "noops_done_s": max(observed[k][1] for k in noops) - go,
        "gap_ms": 1000 * gap,
        "wait_p99_ms": 1000 * _percentile(waits, 0.99),
        "wait_max_ms": 1000 * max(waits),
        "over_bound": sum(1 for w in waits if w > 0.25),
        "record_off_max_ms": 1000 * max(off),
        "slow_recorded_s": statistics.fmean(recorded),
    }


def claim_cost(url: str, depths: list[int], k: int, workdir: Path) -> list[dict[str, float]]:
    """Claim timings at each depth, deepening one queue (the claims are rolled back)."""
    database, rows, seeded = Database(url), [], 0
    for depth in sorted(depths):
        seed(database, seeded, depth)
        seeded = depth
        figures = _result(_spawn(workdir, "_claims", url, str(k)), 60 + k * 2)
        with database.read() as conn:
            queued = conn.execute(text("SELECT count(*) FROM queue_items WHERE status = 'queued'"))
        assert (left := queued.scalar_one()) == depth, f"{left} queued after claims, not {depth}"
        rows.append({"depth": depth, **figures})
    database.dispose()
    return rows


# -- Celery -----------------------------------------------------------------------


def celery_app(broker: str) -> Any:
    """The peer's app: one task that counts its runs in Redis."""
    import redis
    from celery import Celery

    app = Celery("worker_bench", broker=broker, set_as_current=False)
    app.conf.update(task_ignore_result=True, task_default_queue=CELERY_QUEUE)
    app.conf.update(broker_connection_retry_on_startup=True, worker_send_task_events=False)
    counter = redis.Redis.from_url(broker)  # redis-py reconnects after a fork

    @app.task(name=CELERY_TASK, ignore_result=True)
    def noop_task() -> None:
        counter.incr(COUNTER)

    return app


def child_celery_worker(broker: str, pool: str, concurrency: int) -> None:
    """`celery worker` itself, in this process (its prefork children are forked)."""
    argv = f"worker --pool={pool} --concurrency={concurrency} --queues={CELERY_QUEUE} "
    argv += f"--hostname=bench-{pool}@%h --loglevel=WARNING --without-gossip --without-mingle "
    celery_app(broker).worker_main(argv=[*argv.split(), "--without-heartbeat"])


def _wait_count(counter: Any, target: int, timeout: float) -> float:
    """Poll the Redis counter until it reaches `target`; the time it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if int(counter.get(COUNTER) or 0) >= target:
            return time.time()
        time.sleep(0.005)
    raise RuntimeError(f"Celery ran {counter.get(COUNTER)} of {target} tasks in {timeout:.0f}s")


def celery_run(broker: str, pool: str, concurrency: int, n: int, workdir: Path) -> dict[str, float]:
    """N tasks from one producer through a fresh `celery worker`; tasks/s, CPU per task."""
    import redis

    counter = redis.Redis.from_url(broker)
    counter.flushdb()
    app = celery_app(broker)
    with (workdir / f"celery-{pool}.log").open("w") as log:
        worker = subprocess.Popen(
            [sys.executable, __file__, "_celery", broker, pool, str(concurrency)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group, so a stuck pool can be killed with it
        )
    try:
        warm = 4 * concurrency
        for _ in range(warm):
            app.send_task(CELERY_TASK, ignore_result=True)
        _wait_count(counter, warm, 60)
        counter.delete(COUNTER)
        cpu, producer, started = tree_cpu(worker.pid), time.process_time(), time.time()
        for _ in range(n):
            app.send_task(CELERY_TASK, ignore_result=True)
        producer, sent = time.process_time() - producer, time.time() - started
        done = _wait_count(counter, n, 60 + n / 20)
        cpu = tree_cpu(worker.pid) - cpu
    finally:
        stop_celery(worker)
        app.close()
        counter.flushdb()
    return {
        "items_per_s": n / (done - started),
        "wall_s": done - started,
        "cpu_ms_per_item": 1000 * cpu / n,
        "producer_cpu_ms_per_item": 1000 * producer / n,
        "send_s": sent,  # how long the producer took to send the N
    }


def stop_celery(worker: subprocess.Popen[bytes]) -> None:
    """Warm shutdown (SIGTERM), 20 s for it; then SIGKILL to what is left of its group."""
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):  # the group it leads: stray pool children
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)


# -- the run -----------------------------------------------------------------------


MIXED = (
    "database | processes | all done s | no-ops done s | longest no-op start gap ms "
    "| overtaken no-op wait p99 ms | max ms "
    "| waits > 0.25 s | record vs target's clock, max ms | slow item recorded s",
    "| {database} | {pool} | {all_done_s:.2f} | {noops_done_s:.2f} | {gap_ms:.0f} | "
    "{wait_p99_ms:.0f} | "
    "{wait_max_ms:.0f} | {over_bound} | {record_off_max_ms:.0f} | {slow_recorded_s:.2f} |",
)
THROUGHPUT = (
    "system | database | processes/pool | items/s | CPU ms/item | wall (s)",
    "| {system} | {database} | {pool} | {items_per_s:,.0f} | {cpu_ms_per_item:.2f} | {wall_s:.1f} |",
)
CLAIMS = (
    "database | queued | claim mean (ms) | claim p99 (ms) | transaction mean (ms)",
    "| {database} | {depth:,} | {mean_ms:.2f} | {p99_ms:.2f} | {tx_mean_ms:.2f} |",
)


def table(title: str, head: str) -> None:
    """A markdown table's title and head; rows are printed as they are measured."""
    print(f"\n## {title}\n\n| {head} |\n|" + "---|" * (head.count("|") + 1), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=10_000, help="items (and tasks) per run")
    parser.add_argument("--depths", default="100,10000,100000", help="queue depths for claims")
    parser.add_argument("--claims", type=int, default=200, help="timed claims per depth")
    parser.add_argument("--processes", default="1,2", help="worker process counts")
    parser.add_argument("--concurrency", type=int, default=1, help="targets run at once per worker")
    parser.add_argument(
        "--claim-batch", type=int, default=DEFAULT_CLAIM_BATCH, help="most items per claim"
    )
    parser.add_argument(
        "--pool",
        choices=("thread", "process"),
        default="thread",
        help="where python: targets run (`cronplane worker --pool`)",
    )
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--redis", default=REDIS, help="Redis server (loopback)")
    parser.add_argument("--redis-db", type=int, default=5, help="Redis db the bench flushes")
    parser.add_argument("--slow", type=int, default=10, help="slow items in the mixed run")
    parser.add_argument("--slow-seconds", type=float, default=2.0, help="each one's sleep")
    parser.add_argument("--mixed-only", action="store_true", help="only the mixed workload")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-celery", action="store_true")
    args = parser.parse_args()
    for url in ([] if args.no_pg else [args.pg_admin]) + ([] if args.no_celery else [args.redis]):
        if urlsplit(url).hostname not in LOOPBACK:
            parser.error(f"{url}: only loopback servers")
    n, broker = args.items, f"{args.redis.rstrip('/')}/{args.redis_db}"
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-worker-bench-"))
    print(machine.header("worker bench"))
    shape = f"concurrency={args.concurrency}, claim_batch={args.claim_batch}, pool={args.pool!r}"
    print(f"# N={n:,}; Worker(heartbeat=True, {shape}); {args.claims} claims per depth")
    urls = databases(args, workdir)

    shape_args = (args.concurrency, args.claim_batch, args.pool)
    blend: list[dict[str, Any]] = []
    if args.slow:
        title = f"mixed: {args.slow} slow ({args.slow_seconds:g} s) items among N no-ops"
        table(title, MIXED[0])
        for name, url in urls.items():
            count = max(int(p) for p in args.processes.split(",") if p)
            f = mixed(url, n, args.slow, args.slow_seconds, count, workdir, shape_args)
            blend.append({"database": name, "pool": f"{count} proc", **f})
            print(MIXED[1].format(**blend[-1]), flush=True)
    if args.mixed_only:
        print(json.dumps({"bench": "worker", "items": n, "mixed": blend}))
        return
    rows: list[dict[str, Any]] = []
    table("throughput: N no-op items", THROUGHPUT[0])
    for name, url in urls.items():
        for count in (int(p) for p in args.processes.split(",") if p):
            f = throughput(url, n, count, workdir, (args.concurrency, args.claim_batch, args.pool))
            rows.append({"system": "cronplane", "database": name, "pool": f"{count} proc", **f})
            print(THROUGHPUT[1].format(**rows[-1]), flush=True)
    for pool, concurrency in () if args.no_celery else (("prefork", 2), ("threads", 8)):
        f = celery_run(broker, pool, concurrency, n, workdir)
        rows.append(
            {"system": "celery", "database": "redis", "pool": f"{pool} x{concurrency}", **f}
        )
        print(THROUGHPUT[1].format(**rows[-1]), flush=True)
    peers = [r for r in rows if r["system"] == "celery"]
    if peers:
        print()
        for p in peers:
            cpu, sent = p["producer_cpu_ms_per_item"], p["send_s"]
            print(
                f"(Celery {p['pool']}: the producer sent N in {sent:.1f} s, {cpu:.2f} ms CPU each)"
            )
        table(
            "ratio: cronplane items/s ÷ Celery tasks/s",
            "database | processes | ÷ " + " | ÷ ".join(p["pool"] for p in peers),
        )
        for r in rows[: len(rows) - len(peers)]:
            ratios = " | ".join(f"{r['items_per_s'] / p['items_per_s']:.3f}" for p in peers)
            print(f"| {r['database']} | {r['pool']} | {ratios} |")

    claims: list[dict[str, Any]] = []
    depths = [int(d) for d in args.depths.split(",") if d]
    table(f"claim cost: {args.claims} claims per depth, each rolled back", CLAIMS[0])
    for name, url in urls.items():
        for c in claim_cost(url, depths, args.claims, workdir):
            claims.append({"database": name, **c})
            print(CLAIMS[1].format(**claims[-1]), flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    print(
        json.dumps(
            {"bench": "worker", "items": n, "mixed": blend, "throughput": rows, "claims": claims}
        )
    )


if __name__ == "__main__":
    role, *rest = sys.argv[1:] or [""]
    if role == "_work":
        print(json.dumps(child_work(rest[0], int(rest[1]), int(rest[2]), rest[3])))
    elif role == "_claims":
        print(json.dumps(child_claims(rest[0], int(rest[1]))))
    elif role == "_celery":
        child_celery_worker(rest[0], rest[1], int(rest[2]))
    else:
        main()
