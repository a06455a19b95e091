"""What the machine was like when a benchmark ran, printed at its head.

The bench machine is shared and its speed drifts (the same interpreter loop
took 0.7 s on one evening and 2.8 s on the afternoon before), so a figure is
only readable next to the speed and load it was taken at. Peers are run in
the same invocation for the same reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOOP = 10_000_000


def loop_seconds() -> float:
    """Seconds the interpreter takes for a bare 10,000,000-step loop (best of 3)."""
    best = float("inf")
    for _ in range(3):
        started, count = time.perf_counter(), 0
        for _ in range(LOOP):
            count += 1  # noqa: SIM113 -- the bare loop is what is timed
        best = min(best, time.perf_counter() - started)
    return best


def header(name: str) -> str:
    """Two comment lines: when, where, how loaded and how fast the machine was."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"# {name}  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  cpus={os.cpu_count()}  "
        f"python {platform.python_version()}\n"
        f"# load average at start: {load}; 10M-step Python loop: {loop_seconds():.2f} s"
    )


def in_child(script: str, *args: str) -> dict[str, Any]:
    """Run `script` with `args` in a fresh interpreter; the JSON of its last output line."""
    out = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def fresh_postgres(admin_url: str, base: str) -> str:
    """A new, empty database `<base>_<pid>` on the server of `admin_url` (a name no other
    run uses at the same time), dropped when this process exits; its URL."""
    import atexit

    import psycopg

    name = f"{base}_{os.getpid()}"
    admin = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.Error as error:
            print(f"# could not drop {name}: {error}", file=sys.stderr)

    atexit.register(drop)
    return admin_url.rsplit("/", 1)[0] + "/" + name


def tree_cpu(root: int) -> float:
    """User+sys CPU seconds of `root` and its live descendants, from /proc."""
    parents, seconds, tick = {}, {}, os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):  # not a process, or gone
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
            seconds[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    tree: set[int] = set()
    grown = {root}
    while grown != tree:
        tree, grown = grown, grown | {pid for pid, ppid in parents.items() if ppid in grown}
    return sum(seconds.get(pid, 0.0) for pid in tree)


def postgres_backends_cpu(url: str) -> float:
    """CPU seconds of the server processes serving database `url`'s sessions now (/proc;
    the server runs on this machine)."""
    import psycopg

    raw = url.replace("postgresql+psycopg://", "postgresql://")
    name = raw.rsplit("/", 1)[1]
    with psycopg.connect(raw, autocommit=True) as conn:
        pids = [
            row[0]
            for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
        ]
    return sum(tree_cpu(pid) for pid in pids)
