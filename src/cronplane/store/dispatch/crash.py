"""Crash points: named steps of the fire transaction a crash test can kill it at."""

from __future__ import annotations

import os
import signal

CRASH_ENV = "CRONPLANE_CRASH_AT"
CRASH_POINTS = (
    "after_fence",
    "after_select",
    "after_insert",
    "after_update",
    "after_events",
    "after_commit",
)


def crash_point(name: str) -> None:
    """Die here (SIGKILL, no cleanup) when CRONPLANE_CRASH_AT names this point.

    Only for the crash tests: the variable is read at each point so a test can
    aim a subprocess at one step of the fire transaction.
    """
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
