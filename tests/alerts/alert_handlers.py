"""Python targets the alert tests run (imported by module name)."""

from __future__ import annotations

import threading
from typing import Any

from cronplane.targets import RunContext

STARTED = threading.Event()
FAILING = threading.Event()  # set: `flaky` fails; cleared: it succeeds
RELEASE = threading.Event()


def ok(payload: dict[str, Any], context: RunContext) -> str:
    return "ok"


def boom(payload: dict[str, Any], context: RunContext) -> None:
    raise RuntimeError("the job failed")


def flaky(payload: dict[str, Any], context: RunContext) -> str:
    if FAILING.is_set():
        raise RuntimeError("the job failed")
    return "ok"


def hang(payload: dict[str, Any], context: RunContext) -> str:
    """Runs until the test releases it (bounded, so a failing test cannot hang)."""
    STARTED.set()
    RELEASE.wait(30)
    return "released"
