"""`python:` targets in child processes that can be killed (`cronplane worker --pool process`).

A small prefork pool, like Celery's: `size` reusable children, each running
one item at a time. A child is started on first need and reused; one whose
item ran past its timeout, or whose item was cancelled, is killed with
SIGKILL (with every process it started: each child leads its own process
group) and replaced on the next need. A child that dies by itself fails its
item (retried like any failure).

The parent side (:meth:`ProcessPool.run`) is called from the worker's run
threads: it sends (spec, payload, context) down a pipe and waits for the
answer, checking the deadline and the stop flag between short waits.

Children are started with `spawn`: a fresh interpreter, not a fork of a
process that holds database connections and threads. A target's module is
imported in the child on first use and cached there.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from cronplane.targets import PermanentFailure, RunContext, output
from cronplane.targets.python import load_callable

# How often a waiting run looks at its stop flag and deadline (seconds).
POLL = 0.05


class StopFlag(Protocol):
    """Whether a run was asked to stop (a `threading.Event` is one; a worker's are
    processes.stop_flags')."""

    def is_set(self) -> bool: ...


class RunStopped(Exception):
    """The run was stopped before it returned: `reason` is "timeout" or "cancelled"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ChildDied(Exception):
    """The child process ended without answering (it crashed or was killed from outside)."""


def _json_ready(value: Any) -> Any:
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"repr": repr(value)}
    return value


def child_main(conn: Connection) -> None:
    """A child's loop: run one (spec, payload, context, allowed) at a time until the pipe
    closes."""
    if hasattr(os, "setsid"):
        os.setsid()  # its own process group: a kill takes what it started too
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker decides when children stop
    # What the child imported to get here (spawn imports the worker's whole main module)
    # is kept out of the collector's passes: a full pass over it paused a target's return
    # by ~65 ms, and the record's finish with it (tests/worker/test_start_truth.py).
    gc.freeze()
    resolved: dict[tuple[str, tuple[str, ...] | None], Callable[..., Any]] = {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        spec, payload, context, allowed = message
        # The run's log records (targets.output), sent back with its answer.
        attempt = output.RunOutput(logs=True)
        try:
            function = resolved.get((spec, allowed))
            if function is None:
                # The parent's allowed modules, judged here where the walk happens.
                function = resolved[spec, allowed] = load_callable(spec, allowed)
            with output.capturing(attempt):
                value = function(payload, context)
            reply: tuple[str, Any] = ("ok", _json_ready(value))
        except PermanentFailure as error:
            reply = ("permanent", str(error))
        except Exception as error:  # the job's failure travels back as text
            reply = ("error", "".join(traceback.format_exception_only(error)).strip())
        conn.send((*reply, attempt.document()))


class _Child:
    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn


class ProcessPool:
    """Up to `size` child processes running `python:` targets, killed when a run must stop."""

    def __init__(self, size: int, monotonic: Callable[[], float]) -> None:
        self.size = size
        self.monotonic = monotonic
        self._context = multiprocessing.get_context("spawn")
        self._idle: list[_Child] = []
        self._lock = threading.Lock()
        self._closed = False

    def run(
        self,
        spec: str,
        payload: dict[str, Any],
        context: RunContext,
        *,
        timeout: float | None,
        stop: StopFlag,
        on_start: Callable[[], None] | None = None,
        allowed: tuple[str, ...] | None = None,
    ) -> Any:
        """Run the target in a child; its result, or its failure raised here.

        `allowed` are the module prefixes the target may reach (None: the child reads
        CRONPLANE_PYTHON_TARGETS); a target outside them fails permanently, never called.

        `on_start` is called once a child is ready, just before the item is sent
        (a child being spawned is not the target running).

        RunStopped("timeout"|"cancelled") when the child was killed;
        PermanentFailure / RuntimeError (the child's error text) when the
        target raised; ChildDied when the child ended without answering.
        """
        child = self._take()
        if on_start is not None:
            on_start()
        started = self.monotonic()
        try:
            child.conn.send((spec, payload, context, allowed))
            while not child.conn.poll(POLL):
                if stop.is_set():
                    raise RunStopped("cancelled")
                if timeout is not None and self.monotonic() - started >= timeout:
                    raise RunStopped("timeout")
                if not child.process.is_alive():
                    raise ChildDied(
                        f"the python target's process ended (exit code {child.process.exitcode})"
                    )
            kind, value, noted = child.conn.recv()
        except BaseException:
            self._kill(child)
            raise
        self._give_back(child)
        if noted:  # what the child logged: this attempt's output (a killed child's is lost)
            output.note(**noted)
        if kind == "permanent":
            raise PermanentFailure(value)
        if kind == "error":
            raise RuntimeError(value)
        return value

    def warm(self) -> None:
        """Start the children now (a worker's first items then start without a spawn)."""
        started = []
        with self._lock:
            missing = self.size - len(self._idle)
        for _ in range(max(0, missing)):
            started.append(self._spawn())
        for child in started:
            self._give_back(child)

    def pids(self) -> list[int]:
        """The idle children's process ids (tests and diagnostics)."""
        with self._lock:
            return [c.process.pid for c in self._idle if c.process.pid is not None]

    def _take(self) -> _Child:
        with self._lock:
            while self._idle:
                child = self._idle.pop()
                if child.process.is_alive():
                    return child
                child.conn.close()
        return self._spawn()

    def _spawn(self) -> _Child:
        parent, child_end = self._context.Pipe()
        process = self._context.Process(
            target=child_main, args=(child_end,), name="cronplane-run", daemon=True
        )
        process.start()
        child_end.close()
        return _Child(process, parent)

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self.size:
                self._idle.append(child)
                return
        self._end(child)

    def _kill(self, child: _Child) -> None:
        pid = child.process.pid
        if pid is not None and child.process.is_alive():
            # The group (what the target started too), once the child leads one.
            if hasattr(os, "killpg"):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                child.process.kill()
        child.process.join(timeout=5)
        child.conn.close()

    def _end(self, child: _Child) -> None:
        with contextlib.suppress(OSError):
            child.conn.send(None)
        child.process.join(timeout=2)
        if child.process.is_alive():
            self._kill(child)
        child.conn.close()

    def close(self) -> None:
        """End every idle child (a run in flight ends its own when it returns)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for child in idle:
            self._end(child)
