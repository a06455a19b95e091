"""Python targets the worker tests run (imported by module name)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from cronplane.targets import RunContext

CALLS: list[tuple[dict[str, Any], RunContext]] = []


def ok(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    CALLS.append((payload, context))
    return {"echo": payload, "attempt": context.attempt}


def boom(payload: dict[str, Any], context: RunContext) -> None:
    CALLS.append((payload, context))
    raise RuntimeError(f"boom on attempt {context.attempt}")


def opaque(payload: dict[str, Any], context: RunContext) -> object:
    return object()


class Jobs:
    @staticmethod
    def nested(payload: dict[str, Any], context: RunContext) -> str:
        return "nested"


# -- batch and concurrency scenarios (test_batches.py) --------------------------

BARRIER_PARTIES = 4
BARRIER = threading.Barrier(BARRIER_PARTIES, timeout=5)


def together(payload: dict[str, Any], context: RunContext) -> int:
    """Succeeds only when BARRIER_PARTIES calls are in flight at once."""
    return BARRIER.wait()


def logged(payload: dict[str, Any], context: RunContext) -> None:
    """Append "item attempt" to $CRONPLANE_TEST_RUNLOG; hang at call $CRONPLANE_TEST_HANG_AT."""
    path = Path(os.environ["CRONPLANE_TEST_RUNLOG"])
    with path.open("a") as log:
        log.write(f"{context.item_id} {context.attempt}\n")
        log.flush()
        os.fsync(log.fileno())
    hang_at = int(os.environ.get("CRONPLANE_TEST_HANG_AT", "0"))
    if hang_at and len(path.read_text().splitlines()) >= hang_at:
        threading.Event().wait(120)  # killed long before


HOLD = threading.Event()


def held(payload: dict[str, Any], context: RunContext) -> None:
    """Block until the test sets HOLD (10 s at most)."""
    if not HOLD.wait(10):
        raise TimeoutError("HOLD was never set")


ON_RUN: list[Any] = []  # callables the `hook` target calls (a test's worker.stop)


def hook(payload: dict[str, Any], context: RunContext) -> None:
    for call in ON_RUN:
        call()


# -- run output (test_run_output.py): log records captured per item ---------------------

OUTPUT_LOG = logging.getLogger("worker_handlers.output")
PAIR = threading.Barrier(2, timeout=10)


def chatty(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """Log one known line (a WARNING: the root's default level lets it through)."""
    OUTPUT_LOG.warning("chatty %s attempt %s says %s", context.item_id, context.attempt, "hi")
    if payload.get("fail"):
        raise RuntimeError(f"chatty failed on attempt {context.attempt}")
    return {"said": "hi"}


def paired(payload: dict[str, Any], context: RunContext) -> None:
    """Two lines each, the two calls interleaved on two threads by a barrier."""
    OUTPUT_LOG.warning("first line of %s", context.item_id)
    PAIR.wait()
    OUTPUT_LOG.warning("second line of %s", context.item_id)
    PAIR.wait()


def flood(payload: dict[str, Any], context: RunContext) -> None:
    """Log `lines` lines of 100 characters and more."""
    for number in range(int(payload["lines"])):
        OUTPUT_LOG.warning("line %06d %s", number, "x" * 100)


def flaky(payload: dict[str, Any], context: RunContext) -> None:
    """Fail the first attempt, succeed silently after."""
    if context.attempt == 1:
        raise RuntimeError("flaky on attempt 1")
