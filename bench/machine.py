"""What the machine was like when a benchmark ran, printed at its head.

The bench machine is shared and its speed drifts (the same interpreter loop
took 0.7 s on one evening and 2.8 s on the afternoon before), so a figure is
only readable next to the speed and load it was taken at. Peers are run in
the same invocation for the same reason.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
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
