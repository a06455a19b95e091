"""The built-in worker: claim an item, run its target, record the outcome.

:meth:`Worker.run_once` is one step; :meth:`Worker.run` repeats it. A step:

1. claims the next available item in one transaction (no double claim:
   `store.queue.claim`);
2. looks up the item's job for its target and retry options;
3. runs the target outside any transaction, heartbeating the item's lease
   from a side thread so a long job is not mistaken for a dead worker;
4. records the outcome in one transaction with its event: succeeded; or
   failed and requeued after a backoff while attempts remain; or failed.

A worker that dies mid-item leaves it `running` with a lease that lapses;
the housekeeping sweep requeues it (or fails it past its attempts).
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import traceback
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from cronplane import events as ev
from cronplane.clock import Clock
from cronplane.core.backoff import RetryPolicy, outage_delay
from cronplane.core.model import QueueItem
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.events import append_event
from cronplane.store.jobs import get_job
from cronplane.store.schedules import name_of
from cronplane.targets import PermanentFailure, RunContext, Targets
from cronplane.targets.python import PythonTarget

log = logging.getLogger(__name__)

DEFAULT_LEASE = 300.0
DEFAULT_POLL = 1.0
ERROR_LIMIT = 4000  # characters of error text kept on the item


def default_targets(database: Database, clock: Clock) -> Targets:
    """The kinds the built-in worker runs: `python:`, `webhook:`, `celery:`, internal `system:`."""
    from cronplane.targets.celery import CeleryTarget
    from cronplane.targets.system import SystemTarget
    from cronplane.targets.webhook import WebhookTarget

    return Targets(
        {
            "python": PythonTarget(),
            "webhook": WebhookTarget.from_environ(clock),
            "celery": CeleryTarget.from_environ(),
            "system": SystemTarget(database, clock),
        }
    )


def jsonable(value: Any) -> Any:
    """A target's return value as stored: itself when JSON-able, else its repr."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"repr": repr(value)}
    return value


class Worker:
    """One worker thread's loop over the queue."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        name: str | None = None,
        targets: Targets | None = None,
        lease: float = DEFAULT_LEASE,
        poll: float = DEFAULT_POLL,
        heartbeat: bool = True,
        jitter: Callable[[], float] = random.random,
        on_outcome: Callable[[str], None] | None = None,
    ) -> None:
        self.database = database
        # Called after each recorded outcome: succeeded, retry or failed (metrics).
        self.on_outcome = on_outcome
        self.clock = clock
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.targets = targets or default_targets(database, clock)
        self.lease = timedelta(seconds=lease)
        self.poll = poll
        self.heartbeat = heartbeat
        self.jitter = jitter
        self._wake = threading.Event()
        self._stop = threading.Event()

    def run_once(self) -> bool:
        """Claim and run one item; False when none was available."""
        with self.database.begin() as conn:
            item = queue.claim(conn, self.name, self.clock.now(), self.lease)
            if item is None:
                return False
            job = get_job(conn, item.tenant, item.stack, item.job)
            schedule_name = (
                name_of(conn, item.schedule_id) if item.schedule_id is not None else None
            )
        policy = RetryPolicy.from_options(job.options if job else {})
        if job is None:
            self._record(item, policy, error="job missing: nothing to run", retry=False)
            return True
        context = RunContext(
            tenant=item.tenant,
            stack=item.stack,
            environment=item.environment,
            job=item.job,
            item_id=item.id,
            schedule_id=item.schedule_id,
            schedule=schedule_name,
            scheduled_for=item.scheduled_for,
            attempt=item.attempts,
            source=item.source,
            options=dict(job.options),
        )
        try:
            runner, spec = self.targets.resolve(job.target)
            with self._heartbeat(item):
                result = runner.run(spec, dict(item.payload), context)
        except PermanentFailure as error:  # another attempt cannot help (e.g. HTTP 4xx)
            log.info("item %s (%s) failed permanently: %s", item.id, item.job, error)
            self._record(item, policy, error=str(error)[:ERROR_LIMIT], retry=False)
        except Exception as error:  # the job's own failure is data, not a crash
            text = "".join(traceback.format_exception_only(error)).strip()
            log.info("item %s (%s) failed: %s", item.id, item.job, text)
            self._record(item, policy, error=text[:ERROR_LIMIT], retry=True)
        else:
            self._record(item, policy, result=jsonable(result))
        return True

    def _record(
        self,
        item: QueueItem,
        policy: RetryPolicy,
        *,
        result: Any = None,
        error: str | None = None,
        retry: bool = False,
    ) -> None:
        """Write the outcome and its event in one transaction, then report it."""
        outcome = self._write(item, policy, result=result, error=error, retry=retry)
        if outcome is not None and self.on_outcome is not None:
            self.on_outcome(outcome)

    def _write(
        self,
        item: QueueItem,
        policy: RetryPolicy,
        *,
        result: Any,
        error: str | None,
        retry: bool,
    ) -> str | None:
        """The outcome's transaction; None when the item was no longer ours."""
        now = self.clock.now()
        common: dict[str, Any] = {
            "tenant": item.tenant,
            "stack": item.stack,
            "environment": item.environment,
            "schedule_id": item.schedule_id,
            "item_id": item.id,
            "actor": f"worker:{self.name}",
            "now": now,
            "scheduled_for": item.scheduled_for,
        }
        with self.database.begin() as conn:
            if error is None:
                if not queue.succeed(conn, item.id, self.name, now, result):
                    return None
                append_event(conn, ev.ITEM_SUCCEEDED, message=f"{item.job} succeeded", **common)
                return "succeeded"
            if retry and policy.should_retry(item.attempts):
                delay = policy.delay(item.attempts, self.jitter())
                retry_at = now + timedelta(seconds=delay)
                if not queue.fail(conn, item.id, self.name, now, error, retry_at):
                    return None
                append_event(
                    conn,
                    ev.ITEM_RETRY,
                    message=f"{item.job} failed (attempt {item.attempts}); retry in {delay:.0f}s",
                    detail={
                        "error": error,
                        "attempt": item.attempts,
                        "retry_at": retry_at.isoformat(),
                    },
                    **common,
                )
                return "retry"
            if not queue.fail(conn, item.id, self.name, now, error, None):
                return None
            append_event(
                conn,
                ev.ITEM_FAILED,
                message=f"{item.job} failed after {item.attempts} attempt(s)",
                detail={"error": error, "attempt": item.attempts},
                **common,
            )
            return "failed"

    def _heartbeat(self, item: QueueItem) -> _Heartbeat:
        return _Heartbeat(self, item)

    # -- the loop -------------------------------------------------------------

    def wake(self) -> None:
        """Cut the idle wait short (an item was enqueued in-process)."""
        self._wake.set()

    def stop(self) -> None:
        """Ask `run` to return after the current item."""
        self._stop.set()
        self._wake.set()

    def run(self) -> None:
        """Run items until `stop()`; idle polls every `poll` seconds; back off on DB errors."""
        failures = 0
        while not self._stop.is_set():
            try:
                worked = self.run_once()
                failures = 0
            except Exception as error:  # database down, or a bug: keep the thread alive
                failures += 1
                delay = outage_delay(failures)
                if isinstance(error, SQLAlchemyError):
                    log.warning("worker step failed (%s); retrying in %.1fs", error, delay)
                else:
                    log.exception("worker step crashed; retrying in %.1fs", delay)
                self.clock.wait(delay, self._wake)
                continue
            if not worked:
                self.clock.wait(self.poll, self._wake)


class _Heartbeat:
    """While a target runs, extend the item's lease every third of it."""

    def __init__(self, worker: Worker, item: QueueItem) -> None:
        self.worker = worker
        self.item = item
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> None:
        if self.worker.heartbeat:
            self._thread = threading.Thread(
                target=self._beat, name="cronplane-heartbeat", daemon=True
            )
            self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _beat(self) -> None:
        interval = self.worker.lease.total_seconds() / 3
        while not self.worker.clock.wait(interval, self._done):
            try:
                with self.worker.database.begin() as conn:
                    ours = queue.heartbeat(
                        conn,
                        self.item.id,
                        self.worker.name,
                        self.worker.clock.now(),
                        self.worker.lease,
                    )
            except SQLAlchemyError as error:
                log.warning("heartbeat for %s failed: %s", self.item.id, error)
                continue
            if not ours:
                log.warning(
                    "item %s is no longer ours; its outcome will not be recorded", self.item.id
                )
                return
