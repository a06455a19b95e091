"""Python targets for the run-control tests (imported by module name, also in child processes).

Each writes what it does to files named in its payload, so a test in the
parent can see a child's pid and whether its work goes on.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from cronplane.targets import RunContext


def ticking(payload: dict[str, Any], context: RunContext) -> str:
    """Write our pid, then append a tick every 50 ms for `seconds` (a side effect that stops)."""
    Path(payload["pid_file"]).write_text(str(os.getpid()))
    ticks = Path(payload["tick_file"])
    deadline = time.monotonic() + float(payload.get("seconds", 60))
    while time.monotonic() < deadline:
        with ticks.open("a") as out:
            out.write("t\n")
        threading.Event().wait(0.05)
    return "finished"


# In-process concurrency probe (thread pools): the most runs seen at once, per key.
_LOCK = threading.Lock()
RUNNING: dict[str, int] = {}
PEAK: dict[str, int] = {}


def counted(payload: dict[str, Any], context: RunContext) -> None:
    """Count this run under its job and its tenant while it sleeps `seconds`."""
    keys = (f"job:{context.tenant}/{context.job}", f"tenant:{context.tenant}")
    with _LOCK:
        for key in keys:
            RUNNING[key] = RUNNING.get(key, 0) + 1
            PEAK[key] = max(PEAK.get(key, 0), RUNNING[key])
    threading.Event().wait(float(payload.get("seconds", 0.05)))
    with _LOCK:
        for key in keys:
            RUNNING[key] -= 1


def clocked(payload: dict[str, Any], context: RunContext) -> None:
    """Write this run's own clock readings (wall time at start and end, as ISO) to its file
    after sleeping `seconds`: the target's own observation of when it ran."""
    started = time.time()
    threading.Event().wait(float(payload.get("seconds", 1.0)))
    ended = time.time()
    Path(payload["dir"], str(context.item_id)).write_text(f"{started} {ended}")


def cancel_then_wait(payload: dict[str, Any], context: RunContext) -> None:
    """Cancel another item through the run service (as an operator would), then wait a
    little: the item it cancelled was claimed in the same batch, behind this one."""
    from uuid import UUID

    from cronplane.clock import SystemClock
    from cronplane.service.base import Context
    from cronplane.service.runs import RunService
    from cronplane.store.database import Database

    database = Database(payload["url"])
    try:
        RunService(Context(database, SystemClock())).cancel_item(
            context.tenant, UUID(payload["other"]), actor="cli:ops"
        )
    finally:
        database.dispose()
    threading.Event().wait(float(payload.get("seconds", 0.1)))


def touch(payload: dict[str, Any], context: RunContext) -> None:
    """Append to the file named in the payload: the proof that this target ran."""
    with Path(payload["file"]).open("a") as out:
        out.write("ran\n")


def warm(payload: dict[str, Any], context: RunContext) -> None:
    """Import what `cancel_then_wait` uses (a pool's child then has it loaded)."""
    import cronplane.service.runs  # noqa: F401
