"""Write path under load (issue 21): many clients creating and updating schedules at once.

    .venv/bin/python bench/write_load.py                       # SQLite, then PostgreSQL, 60 s each
    .venv/bin/python bench/write_load.py --only sqlite --seconds 20 --clients 200

For each database:
1. a fresh database is migrated; tenant `acme` gets an active job
   `billing/report` and an admin token (through the service, not HTTP);
2. a real `cronplane serve` (API, dispatcher and worker threads) starts on
   127.0.0.1 against it, its output kept;
3. `--clients` concurrent clients (asyncio + httpx, one keep-alive
   connection each, bounded to loopback) loop for `--seconds`: create a
   schedule of the job with a unique name, then update it (a PATCH of its
   cron and payload), again and again. The crons are yearly, so the
   dispatcher has nothing to fire and the load is the write path alone.
Reported: the machine's speed and load (`machine.header`), requests, answers
by status, the CPU the server and the clients used, latency p50/p99/max per kind, the 5xx
count, and every "database is locked" seen in an answer or in the server's
output. The script exits 1 when any answer is a 5xx or a transport error,
or "database is locked" surfaces anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg

import machine
from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec
from cronplane.service import ScheduleService
from cronplane.service.base import Context
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "m")

PG_ADMIN = os.environ.get("CRONPLANE_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)
LOCKED = "database is locked"
CRONS = ("0 0 1 1 *", "0 0 2 1 *")  # yearly: nothing fires during the run


@dataclass
class Tally:
    """What the clients saw."""

    statuses: Counter[int] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"create": [], "update": []})
    transport_errors: Counter[str] = field(default_factory=Counter)
    locked: int = 0
    samples_5xx: list[str] = field(default_factory=list)

    def record(self, kind: str, response: httpx.Response, elapsed: float) -> None:
        self.statuses[response.status_code] += 1
        self.latencies[kind].append(elapsed)
        if LOCKED in response.text:
            self.locked += 1
        if response.status_code >= 500 and len(self.samples_5xx) < 5:
            self.samples_5xx.append(f"{kind} {response.status_code} {response.text[:200]}")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) used so far by process `pid`."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(url: str) -> str:
    """Migrate, register the active job, return an admin token of tenant acme."""
    database = Database(url)
    database.upgrade()
    service = ScheduleService(database, FakeClock(NOW))
    service.register_job(
        "acme", "billing", JobSpec(name="report", target="python:m:f"), actor="bench"
    )
    secret = TokenService(Context(database, FakeClock(NOW))).create(
        tenant="acme", role="admin", actor="bench"
    )
    database.dispose()
    return secret.secret


def start_server(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """`cronplane serve` on loopback, output to `log`; returns once /readyz answers 200."""
    env = {**os.environ, "CRONPLANE_DATABASE_URL": url}
    command = [sys.executable, "-m", "cronplane", "serve", "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    with log.open("wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.kill()
    raise SystemExit(f"cronplane serve did not become ready; see {log}")


async def client(number: int, base: str, token: str, deadline: float, tally: Tally) -> None:
    """Create a schedule, update it, repeat until `deadline` (monotonic seconds)."""
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:
        sequence = 0
        while time.monotonic() < deadline:
            sequence += 1
            name = f"c{number:03d}-{sequence:06d}"
            body = {"job": "report", "cron": CRONS[0], "name": name, "stack": "billing",
                    "environment": "prod", "payload": {"n": sequence}}  # fmt: skip
            for kind, method, path, payload in (
                ("create", "POST", "/api/v1/tenants/acme/schedules", body),
                ("update", "PATCH", f"/api/v1/tenants/acme/schedules/billing/prod/{name}",
                 {"cron": CRONS[1], "payload": {"n": -sequence}}),
            ):  # fmt: skip
                started = time.perf_counter()
                try:
                    response = await http.request(method, path, json=payload)
                except httpx.TransportError as error:
                    tally.transport_errors[type(error).__name__] += 1
                    continue
                tally.record(kind, response, time.perf_counter() - started)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def load(base: str, token: str, clients: int, seconds: float) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(client(n, base, token, deadline, tally) for n in range(clients)))
    return tally


def run(database: str, url: str, clients: int, seconds: float, workdir: Path) -> bool:
    """One database's run; prints its table row and returns whether it passed."""
    token = prepare(url)
    port = free_port()
    log = workdir / f"serve-{database}.log"
    server = start_server(url, port, log)
    try:
        started, server_before = time.perf_counter(), process_cpu(server.pid)
        client_before = time.process_time()
        tally = asyncio.run(load(f"http://127.0.0.1:{port}", token, clients, seconds))
        wall = time.perf_counter() - started
        server_seconds = process_cpu(server.pid) - server_before
        client_seconds = time.process_time() - client_before
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    server_locked = log.read_text(errors="replace").count(LOCKED)
    total = sum(tally.statuses.values())
    errors_5xx = sum(count for status, count in tally.statuses.items() if status >= 500)
    statuses = ", ".join(f"{status}×{count:,}" for status, count in sorted(tally.statuses.items()))
    print(
        f"\n{database}: {clients} clients, {wall:.1f} s, {total:,} answers ({total / wall:.0f}/s)"
    )
    print(f"  statuses: {statuses}")
    print(
        f"  CPU: server {server_seconds:.1f} s ({server_seconds / max(total, 1) * 1000:.2f} ms "
        f"per answer), clients {client_seconds:.1f} s, of {wall * (os.cpu_count() or 1):.0f} "
        "core-seconds"
    )
    for kind, values in tally.latencies.items():
        print(
            f"  {kind:6}: {len(values):,} answers, p50 {percentile(values, 0.5) * 1000:.0f} ms, "
            f"p99 {percentile(values, 0.99) * 1000:.0f} ms, "
            f"max {max(values, default=0) * 1000:.0f} ms"
        )
    print(f"  5xx: {errors_5xx}; transport errors: {dict(tally.transport_errors) or 0}")
    print(
        f"  '{LOCKED}': {tally.locked} in answers, {server_locked} in the server's output ({log})"
    )
    for sample in tally.samples_5xx:
        print(f"  5xx sample: {sample}")
    return (
        errors_5xx == 0
        and not tally.transport_errors
        and tally.locked == 0
        and server_locked == 0
        and total > 0
    )


def postgres_url() -> tuple[str, str]:
    """A fresh PostgreSQL database for the run: (SQLAlchemy URL, its name)."""
    name = f"cronplane_write_load_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN.replace("postgresql://", "postgresql+psycopg://").rsplit("/", 1)[0]
    return f"{base}/{name}", name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    if not 1 <= args.clients <= 1000 or not 0 < args.seconds <= 600:
        parser.error("--clients must be 1..1000 and --seconds in (0, 600]")
    print(machine.header("write_load"))
    passed = True
    with tempfile.TemporaryDirectory(prefix="cronplane-write-load-") as tmp:
        workdir = Path(tmp)
        if args.only in (None, "sqlite"):
            url = f"sqlite:///{workdir / 'cronplane.db'}"
            passed &= run("sqlite", url, args.clients, args.seconds, workdir)
        if args.only in (None, "postgresql"):
            url, name = postgres_url()
            try:
                passed &= run("postgresql", url, args.clients, args.seconds, workdir)
            finally:
                with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print("\nPASS" if passed else "\nFAIL: a 5xx, a transport error, or a locked database")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
