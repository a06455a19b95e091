"""HTTP API benchmark (run by hand; results in docs/performance.md, section "API").

    .venv/bin/python bench/api_bench.py                       # SQLite and PostgreSQL
    .venv/bin/python bench/api_bench.py --only sqlite --preload 100000 --sqlite-workers 1

For each database:
1. a fresh database is migrated and preloaded with `--preload` schedules of
   tenant `acme` (one bulk sync, not through HTTP) and an admin token made;
2. the API runs in a *separate process*: `uvicorn
   cronplane.api.server:app_from_environment --factory --workers W` on
   127.0.0.1 (API only: no dispatcher or worker competes for the CPU);
3. this process is the load: `--concurrency` threads, each with its own
   keep-alive httpx client, over loopback;
   - creates: `--creates` single `POST /api/v1/tenants/acme/schedules`
     (one schedule each, unique names) -> creates/s, p50, p99;
   - list: `GET …/schedules?limit=100` (first page and a page deep in the
     keyset), first one client at a time (latency: p50, p99), then
     `--concurrency` clients (throughput: req/s).
Every answer must be 201/200; the script exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import psycopg

from cronplane.clock import FakeClock
from cronplane.core.model import CronDeclaration, JobSpec, Scope
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.tokens import TokenService

PG_ADMIN = os.environ.get("CRONPLANE_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)


def server_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by the server process and its children."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[1] is the parent pid; [11], [12] utime and stime in clock ticks.
        if int(entry) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@dataclass
class Result:
    """Latencies (seconds) of one phase, its wall time, and the server's CPU seconds."""

    name: str
    latencies: list[float]
    wall: float
    errors: int
    cpu: float = 0.0

    @property
    def cpu_ms(self) -> float:
        """Server CPU per request, in ms: independent of what else the machine runs."""
        return self.cpu / max(1, len(self.latencies)) * 1000

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall

    def pct(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000

    def row(self, database: str) -> str:
        return (
            f"| {database} | {self.name} | {len(self.latencies):,} | {self.rate:,.0f} "
            f"| {statistics.median(self.latencies) * 1000:.1f} | {self.pct(0.99):.1f} "
            f"| {self.cpu_ms:.2f} | {self.errors} |"
        )


def prepare(url: str, preload: int) -> str:
    """Migrate, preload `preload` schedules for tenant acme, return an admin token."""
    database = Database(url)
    database.upgrade()
    service = ScheduleService(database, FakeClock(NOW))
    for stack in ("bulk", "web"):
        service.register_job(
            "acme", stack, JobSpec(name="report", target="python:m:f"), actor="bench"
        )
    crons = {
        f"s{n:06d}": CronDeclaration(cron=f"{n % 60} * * * *", job="report") for n in range(preload)
    }
    started = time.perf_counter()
    service.sync(Scope("acme", "bulk", "prod"), crons, actor="bench")
    print(f"  preloaded {preload:,} schedules in {time.perf_counter() - started:.1f} s")
    secret = (
        TokenService(database, FakeClock(NOW))
        .create(tenant="acme", role="admin", actor="bench")
        .secret
    )
    database.dispose()
    return secret


def start_server(url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CRONPLANE_DATABASE_URL": url}
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "cronplane.api.server:app_from_environment",
        "--factory",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    server = subprocess.Popen(command, env=env)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.kill()
    raise SystemExit("the API server did not become ready")


def load(
    server: subprocess.Popen[bytes],
    name: str,
    base: str,
    token: str,
    total: int,
    concurrency: int,
    request: Callable[[httpx.Client, int], httpx.Response],
    expect: int,
) -> Result:
    """`total` requests from `concurrency` threads; latency of each."""
    latencies: list[float] = []
    errors = [0]
    counter = iter(range(total))
    lock = threading.Lock()

    def worker() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                started = time.perf_counter()
                answer = request(client, n)
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    if answer.status_code != expect:
                        errors[0] += 1
                        if errors[0] <= 3:
                            print(f"  {name}: {answer.status_code} {answer.text[:200]}")

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    cpu = server_cpu(server.pid)
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return Result(name, latencies, wall, errors[0], server_cpu(server.pid) - cpu)


def bench(database: str, url: str, args: argparse.Namespace, workers: int) -> list[Result]:
    print(f"{database} ({workers} uvicorn process(es), {args.concurrency} clients):")
    token = prepare(url, args.preload)
    server = start_server(url, args.port, workers)
    base = f"http://127.0.0.1:{args.port}"
    run_id = random.randrange(1_000_000)
    results: list[Result] = []
    try:

        def create(client: httpx.Client, n: int) -> httpx.Response:
            body = {
                "job": "report",
                "cron": "*/5 * * * *",
                "name": f"c{run_id}-{n}",
                "stack": "web",
            }
            return client.post("/api/v1/tenants/acme/schedules", json=body)

        def first_page(client: httpx.Client, n: int) -> httpx.Response:
            return client.get("/api/v1/tenants/acme/schedules", params={"limit": 100})

        deep = httpx.get(
            f"{base}/api/v1/tenants/acme/schedules",
            params={"limit": 100, "stack": "bulk", "environment": "prod", "job": "report"},
            headers={"Authorization": f"Bearer {token}"},
        ).json()["next_cursor"]

        def filtered_page(client: httpx.Client, n: int) -> httpx.Response:
            params = {"limit": 100, "stack": "bulk", "environment": "prod", "cursor": deep}
            return client.get("/api/v1/tenants/acme/schedules", params=params)

        # Warm-up: connections, caches, the first compile of each query.
        load(server, "warm-up", base, token, 200, 2, first_page, 200)
        results.append(
            load(
                server,
                "create (1 schedule/request)",
                base,
                token,
                args.creates,
                args.concurrency,
                create,
                201,
            )
        )
        results.append(
            load(server, "list 100, 1 client", base, token, args.lists, 1, first_page, 200)
        )
        results.append(
            load(
                server,
                "list 100 after a cursor, 1 client",
                base,
                token,
                args.lists,
                1,
                filtered_page,
                200,
            )
        )
        results.append(
            load(
                server,
                f"list 100, {args.concurrency} clients",
                base,
                token,
                args.lists * 2,
                args.concurrency,
                first_page,
                200,
            )
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    for result in results:
        print("  " + result.row(database))
    return results


def pg_database() -> tuple[str, Callable[[], None]]:
    name = f"cronplane_api_bench_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return PG_ADMIN.replace("postgresql://", "postgresql+psycopg://").rsplit("/", 1)[
        0
    ] + "/" + name, drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--preload", type=int, default=100_000)
    parser.add_argument("--creates", type=int, default=5_000)
    parser.add_argument("--lists", type=int, default=1_000)
    parser.add_argument("--concurrency", type=int, default=8)
    # SQLite serializes writers on a file lock; a second process only adds lock waits.
    parser.add_argument("--sqlite-workers", type=int, default=1, help="uvicorn processes")
    parser.add_argument("--pg-workers", type=int, default=2, help="uvicorn processes")
    parser.add_argument("--port", type=int, default=18080)
    args = parser.parse_args()
    failed = False
    rows: list[str] = []
    if args.only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as folder:
            for result in bench(
                "SQLite", f"sqlite:///{folder}/api_bench.db", args, args.sqlite_workers
            ):
                rows.append(result.row("SQLite"))
                failed |= result.errors > 0
    if args.only in (None, "postgres"):
        url, drop = pg_database()
        try:
            for result in bench("PostgreSQL", url, args, args.pg_workers):
                rows.append(result.row("PostgreSQL"))
                failed |= result.errors > 0
        finally:
            drop()
    print()
    print(
        "| database | phase | requests | req/s | p50 ms | p99 ms | server CPU ms/request | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
