"""End-to-end benchmark: N schedules due at one instant, through a real `cronplane serve`.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/e2e_bench.py                        # SQLite x3, PostgreSQL x3, defaults
    .venv/bin/python bench/e2e_bench.py --runs 1 --serve-args="--workers 1 --claim-batch 512"

Each run: a fresh database (a SQLite file in a temp dir, or a fresh
PostgreSQL database `cronplane_e2e_bench_<pid>` on --pg-admin, dropped at exit), migrated, with the
worker bench's no-op job (`python:worker_bench:noop`) and N daily schedules
seeded in SQL (the dispatch bench's `seed`), all due at one instant T a few
seconds ahead. Then the installed `cronplane serve` (the script beside
sys.executable) starts in its own process group on a free loopback port,
with the serve options given (none: the command's defaults). We wait for
`/readyz`, check T is still ahead, then poll the database until all N items
have succeeded (bounded by --timeout).

Reported: **fired** = the fire half, two bounds: max(created_at) - T (the
clock of the last fire batch, taken as it began) / the time the dispatcher
logged the tick that fired the N-th item - T (after its commits and, on
SQLite, its WAL checkpoint; the serve log, ms, local time); **first ran** =
min(started_at) - T; **all succeeded by** = max(updated_at) - T (the
whole: due instant to the last success written). Only the bench tenant's items count
(not the node's own `_system` housekeeping items). CPU = user+sys of the
serve process tree from just before T to the last success (/proc); RSS = its peak
(VmHWM). On PostgreSQL T comes from the database's clock, which the
dispatcher also uses there. The server is stopped with SIGINT (its Ctrl-C),
then its group is killed if it lingers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text

import machine
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from dispatch_bench import clock_for, seed
from worker_bench import PG_ADMIN, fresh_postgres, register_noop, tree_cpu

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "worker_bench")

PG_NAME = "cronplane_e2e_bench"
BENCH = Path(__file__).resolve().parent
PROGRESS = (
    "SELECT count(*), sum(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END), "
    "sum(CASE WHEN status IN ('failed', 'dead', 'expired', 'cancelled') THEN 1 ELSE 0 END) "
    "FROM queue_items WHERE tenant = 'bench'"  # not the node's own `_system` items
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


FIRE_LINE = re.compile(
    r"^(\S+ \S+) INFO cronplane\.processes\.dispatcher: term \d+: .*\bfire=(\d+)"
)


def fire_logged(log: Path, n: int) -> datetime:
    """When the dispatcher logged the tick that fired the N-th item (after its commits).

    The log's times are the server's local time, to the millisecond.
    """
    fired = 0
    for line in log.read_text().splitlines():
        if match := FIRE_LINE.match(line):
            fired += int(match[2])
            if fired >= n:
                return datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").astimezone()
    raise RuntimeError(f"the server logged {fired} fires, not {n}: see {log}")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_serve(url: str, port: int, options: list[str], log: Path) -> subprocess.Popen[bytes]:
    """The installed `cronplane serve` in a process group of its own; the bench dir importable."""
    command = Path(sys.executable).with_name("cronplane")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), env.get("PYTHONPATH")) if p)
    with log.open("w") as out:
        return subprocess.Popen(
            [str(command), "serve", "--db", url, "--port", str(port), *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )


def wait_ready(server: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"cronplane serve exited with {server.returncode}")
        ready = f"http://127.0.0.1:{port}/readyz"
        with contextlib.suppress(OSError), urllib.request.urlopen(ready, timeout=1) as answer:
            if answer.status == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"cronplane serve not ready within {timeout:.0f} s")


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGINT (Ctrl-C) to the group, 20 s to stop; then SIGKILL to what is left of it."""
    if server.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=10)


def run(
    url: str, n: int, options: list[str], lead: float, timeout: float, log: Path
) -> dict[str, Any]:
    """One burst of N through a fresh `cronplane serve`; its figures."""
    register_noop(url)
    database = Database(url)
    clock = clock_for(database)
    # T: after seeding (PostgreSQL vacuums too) and the server's start-up.
    due = (clock.now() + timedelta(seconds=lead + n / 5_000)).replace(microsecond=0)
    seed(database, 0, n, due, "due-")
    port = free_port()
    server = start_serve(url, port, options, log)
    try:
        wait_ready(server, port, timeout=30)
        ahead = (due - clock.now()).total_seconds()
        assert ahead > 0.2, f"the server was ready {-ahead:.1f} s after T; raise --lead"
        time.sleep(ahead - 0.2)
        cpu = tree_cpu(server.pid)
        deadline = time.monotonic() + timeout
        while True:
            with database.read() as conn:
                total, succeeded, bad = conn.execute(text(PROGRESS)).one()
            if bad:
                raise RuntimeError(f"{bad} items did not succeed; see {log}")
            if total == n and succeeded == n:
                break
            if server.poll() is not None:
                raise RuntimeError(f"cronplane serve exited with {server.returncode}; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{succeeded} of {n} succeeded after {timeout:.0f} s")
            time.sleep(0.1)
        cpu = tree_cpu(server.pid) - cpu
        rss = peak_rss_mb(server.pid)
    finally:
        stop(server)
    with database.read() as conn:
        mine = queue_items.c.tenant == "bench"
        # updated_at: when the last outcome was written (finished_at is when the
        # target returned, before its group was written).
        columns = (func.max(queue_items.c.created_at), func.max(queue_items.c.updated_at))
        fired, finished = conn.execute(select(*columns).where(mine)).one()
        ran = conn.execute(select(func.min(queue_items.c.started_at)).where(mine)).scalar_one()
    database.dispose()
    whole = (finished - due).total_seconds()
    return {
        "fired_s": (fired - due).total_seconds(),
        "committed_s": (fire_logged(log, n) - due).total_seconds(),
        "first_ran_s": (ran - due).total_seconds(),
        "done_s": whole,
        "items_per_s": n / whole,
        "cpu_s": cpu,
        "rss_mb": rss,
    }


ROW = (
    "| {database} | {n:,} | {settings} | {fired_s:.2f} / {committed_s:.2f} | {first_ran_s:.2f} | {done_s:.2f} | {items_per_s:,.0f} "
    "| {cpu_s:.1f} | {rss_mb:.0f} |"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=10_000, help="schedules due at T")
    parser.add_argument("--runs", type=int, default=3, help="runs per database")
    parser.add_argument(
        "--serve-args", default="", help="options for `cronplane serve` (default: its defaults)"
    )
    parser.add_argument("--lead", type=float, default=6.0, help="seconds from seeding to T")
    parser.add_argument("--timeout", type=float, default=60.0, help="most seconds from T")
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    options = shlex.split(args.serve_args)
    settings = " ".join(options) or "defaults"
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-e2e-bench-"))
    print(machine.header("end-to-end bench"))
    print(f"# N={args.items:,} due at T; `cronplane serve {' '.join(options)}`".rstrip())
    print(
        "\n| database | N | serve options | fired (s): last batch began / tick logged | first ran (s) "
        "| all succeeded by (s) "
        "| items/s end to end | CPU s | RSS MB (peak) |\n|---|---|---|---|---|---|---|---|---|",
        flush=True,
    )
    rows = []
    kinds = ([] if args.no_sqlite else ["sqlite"]) + ([] if args.no_pg else ["postgres"])
    try:
        for kind in kinds:
            for i in range(args.runs):
                if kind == "sqlite":
                    url = f"sqlite:///{workdir / f'e2e-{i}.db'}"
                else:
                    url = fresh_postgres(args.pg_admin, PG_NAME)
                log = workdir / f"serve-{kind}-{i}.log"
                f = run(url, args.items, options, args.lead, args.timeout, log)
                rows.append({"database": kind, "n": args.items, "settings": settings, **f})
                print(ROW.format(**rows[-1]), flush=True)
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"\n# load average at end: {load}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"bench": "e2e", "items": args.items, "serve": options, "runs": rows}))


if __name__ == "__main__":
    main()
