"""HTTP API benchmark (run by hand; results in docs/performance.md, section "API").

    .venv/bin/python bench/api_bench.py                  # SQLite (1 and 2 processes), PostgreSQL
    .venv/bin/python bench/api_bench.py --only sqlite --sqlite-workers 1 --seconds 5

For each database and process count:
1. a fresh database is migrated and preloaded with `--preload` schedules of
   tenant `acme` (one bulk sync, not through HTTP) and an admin token made;
2. the API runs in *separate processes*: `uvicorn
   cronplane.api.server:app_from_environment --factory --workers W` on
   127.0.0.1 (API only: no dispatcher or worker competes for the CPU);
3. the load is wrk (Debian package `wrk`), a C program, so that on a small
   machine the load takes little of the CPU the server needs; each phase
   runs `--seconds` over keep-alive connections:
   - creates: single `POST /api/v1/tenants/acme/schedules` (one schedule
     each, unique names) over `--concurrency` connections -> creates/s;
   - list: `GET …/schedules?limit=100` (first page, and a page deep in the
     keyset), over one connection (latency p50/p99), then over
     `--concurrency` connections (throughput).
Server CPU per request is read from /proc for the server's processes. Every
answer must be 201/200; the script exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg

import machine
from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "m")

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
        TokenService(Context(database, FakeClock(NOW)))
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


# wrk runs this in each of its threads: unique names per thread and request,
# and a summary line (JSON) at the end that this script parses.
WRK_SCRIPT = r"""
local counter = 0
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
local create = os.getenv("BENCH_CREATE") == "1"
if create then
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  if not create then return wrk.request() end
  counter = counter + 1
  local body = string.format(
    '{"job":"report","cron":"*/5 * * * *","name":"c%s-%d-%d","stack":"web"}',
    os.getenv("BENCH_RUN"), tid, counter)
  return wrk.format(nil, nil, nil, body)
end
function done(summary, latency, requests)
  local out = string.format(
    '{"requests":%d,"seconds":%f,"bad_status":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d}',
    summary.requests, summary.duration / 1e6, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99))
  io.write("BENCH " .. out .. "\n")
end
"""


@dataclass
class Result:
    """One phase: requests answered, wall seconds, latency percentiles, server CPU seconds."""

    name: str
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu: float

    @property
    def cpu_ms(self) -> float:
        """Server CPU per request, in ms: independent of what else the machine runs."""
        return self.cpu / max(1, self.requests) * 1000

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def row(self, database: str, workers: int) -> str:
        return (
            f"| {database} | {workers} | {self.name} | {self.requests:,} | {self.rate:,.0f} "
            f"| {self.p50_ms:.1f} | {self.p99_ms:.1f} | {self.cpu_ms:.2f} | {self.errors} |"
        )


def load(
    server: subprocess.Popen[bytes],
    name: str,
    url: str,
    token: str,
    *,
    connections: int,
    seconds: float,
    create: bool,
    script: str,
) -> Result:
    """wrk against `url` for `seconds` over `connections` keep-alive connections."""
    env = {**os.environ, "BENCH_CREATE": "1" if create else "0", "BENCH_RUN": str(time.time_ns())}
    command = [
        "wrk",
        f"-t{min(2, connections)}",
        f"-c{connections}",
        f"-d{round(seconds)}s",
        "--timeout",
        "30s",
        "-s",
        script,
        "-H",
        f"Authorization: Bearer {token}",
        url,
    ]
    cpu = server_cpu(server.pid)
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    used = server_cpu(server.pid) - cpu
    line = next(text for text in output.splitlines() if text.startswith("BENCH "))
    summary = json.loads(line.removeprefix("BENCH "))
    errors = summary["bad_status"] + summary["socket_errors"]
    if errors:
        print(f"  {name}: {errors} requests failed\n{output}")
    return Result(
        name,
        summary["requests"],
        summary["seconds"],
        summary["p50_us"] / 1000,
        summary["p99_us"] / 1000,
        errors,
        used,
    )


def bench(
    database: str, url: str, args: argparse.Namespace, workers: int, script: str
) -> list[Result]:
    print(f"{database} ({workers} uvicorn process(es)):")
    token = prepare(url, args.preload)
    server = start_server(url, args.port, workers)
    base = f"http://127.0.0.1:{args.port}/api/v1/tenants/acme/schedules"
    results: list[Result] = []
    try:
        deep = httpx.get(
            base,
            params={"limit": 100, "stack": "bulk", "environment": "prod", "job": "report"},
            headers={"Authorization": f"Bearer {token}"},
        ).json()["next_cursor"]
        first_page = f"{base}?limit=100"
        deep_page = f"{base}?limit=100&stack=bulk&environment=prod&cursor={deep}"

        def phase(name: str, target: str, connections: int, create: bool = False) -> Result:
            result = load(
                server,
                name,
                target,
                token,
                connections=connections,
                seconds=args.seconds,
                create=create,
                script=script,
            )
            print("  " + result.row(database, workers), flush=True)
            return result

        # Warm-up: connections, caches, the first compile of each query.
        load(
            server,
            "warm-up",
            first_page,
            token,
            connections=2,
            seconds=2,
            create=False,
            script=script,
        )
        results.append(phase("create (1 schedule/request)", base, args.concurrency, create=True))
        results.append(phase("list 100, 1 client", first_page, 1))
        results.append(phase("list 100 after a cursor, 1 client", deep_page, 1))
        results.append(phase(f"list 100, {args.concurrency} clients", first_page, args.concurrency))
    finally:
        server.terminate()
        server.wait(timeout=30)
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
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--concurrency", type=int, default=32, help="connections")
    parser.add_argument(
        "--sqlite-workers", default="1,2", help="uvicorn processes, comma-separated"
    )
    parser.add_argument("--pg-workers", default="2", help="uvicorn processes, comma-separated")
    parser.add_argument("--port", type=int, default=18080)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("the load comes from wrk: apt-get install wrk")
    print(machine.header("api bench"), flush=True)
    failed = False
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        script = f"{folder}/load.lua"
        Path(script).write_text(WRK_SCRIPT)
        runs: list[tuple[str, int]] = []
        if args.only in (None, "sqlite"):
            runs += [("SQLite", int(w)) for w in args.sqlite_workers.split(",")]
        if args.only in (None, "postgres"):
            runs += [("PostgreSQL", int(w)) for w in args.pg_workers.split(",")]
        for database, workers in runs:
            if database == "SQLite":
                url, drop = f"sqlite:///{folder}/api_bench_{workers}.db", (lambda: None)
            else:
                url, drop = pg_database()
            try:
                for result in bench(database, url, args, workers, script):
                    rows.append(result.row(database, workers))
                    failed |= result.errors > 0
            finally:
                drop()
    print()
    print(
        "| database | uvicorn processes | phase | requests | req/s | p50 ms | p99 ms "
        "| server CPU ms/request | errors |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
