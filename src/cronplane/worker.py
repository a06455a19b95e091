"""The built-in worker: claim a batch of items, run their targets, record the outcomes.

:meth:`Worker.run_once` is one step; :meth:`Worker.run` repeats it. A step:

1. claims up to `claim_batch` available items in one transaction (no double
   claim: `store.queue.claim_batch`) and looks up their jobs (target, retry
   options) and schedule names, once per distinct key;
2. runs the targets outside any transaction: in this thread, or `concurrency`
   at a time on a thread pool (for I/O-bound targets); the worker's one
   heartbeat thread extends the lease of every item it holds, so a long job is
   not mistaken for a dead worker;
3. records the outcomes in groups, one transaction each with their events:
   succeeded; or failed and requeued after a backoff while attempts remain;
   or failed. A group is written when the batch is done, or earlier when an
   outcome arrives and the group's oldest has waited `flush_after` seconds
   (an outcome waits at most for the item running beside or after it; the
   batch sizing keeps that near `BATCH_SECONDS` once slow items are seen).
   Each write is conditional on the lease: an item recovered meanwhile
   records nothing.

Timeouts and cancellation (docs/controls.md): an item's `timeout` travels
with it; a cancel request reaches the worker through its heartbeat thread's
watch. With `pool="process"` a `python:` target runs in a child process
(targets.processes) that is killed at the timeout or on the request, and
the item is recorded timed out (an attempt used: retried while attempts
remain) or cancelled. With `pool="thread"` (the default) a Python thread
cannot be stopped: the run goes on to its end, and the item is then
recorded timed out or cancelled instead of its result.

A worker that dies mid-batch leaves its claimed items `running` with leases
that lapse; the housekeeping sweep requeues them (or fails them past their
attempts), and the next attempt runs them. Nothing runs twice within one
attempt, and nothing is marked succeeded that did not run. A worker asked to
stop gives its unstarted claims back (`queue.release`).
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
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core.backoff import RetryPolicy, outage_delay
from cronplane.core.model import Job, QueueItem
from cronplane.errors import RunTimedOut
from cronplane.heartbeat import DEFAULT_WATCH, Heartbeat
from cronplane.recorder import RunOutcome, record
from cronplane.store import limits, outcomes
from cronplane.store.database import Database
from cronplane.store.jobs import get_job
from cronplane.store.schedules import name_of
from cronplane.targets import PermanentFailure, RunContext, Targets
from cronplane.targets.processes import ProcessPool, RunStopped
from cronplane.targets.python import PythonTarget

log = logging.getLogger(__name__)

DEFAULT_LEASE = 300.0
DEFAULT_POLL = 1.0
DEFAULT_FLUSH_AFTER = 1.0  # seconds an outcome may wait for its group
# A claim takes about this many seconds of work per run slot (at most
# `claim_batch` items): fast items go in big batches, slow ones in small, so
# a worker does not sit on claims other workers could be running.
BATCH_SECONDS = 0.5
DEFAULT_CLAIM_BATCH = 128  # `cronplane worker|serve`; the class itself claims `concurrency`
# A worker claims in turns by tenant at least this often (seconds), so a
# tenant's item in the claim window starts within about this long of
# reaching it, whatever another tenant's backlog; other claims take the
# claim index's order, which costs less.
FAIR_CLAIM_EVERY = 0.25
ERROR_LIMIT = 4000  # characters of error text kept on the item
POOLS = ("thread", "process")


def default_targets(database: Database, clock: Clock) -> Targets:
    """The kinds the built-in worker runs: `python:`, `webhook:`, `celery:`, `command:` (only
    with CRONPLANE_ALLOW_COMMAND_TARGETS=1; otherwise its items fail), internal `system:`."""
    from cronplane.targets.celery import CeleryTarget
    from cronplane.targets.command import CommandTarget
    from cronplane.targets.system import SystemTarget
    from cronplane.targets.webhook import WebhookTarget

    return Targets(
        {
            "python": PythonTarget(),
            "webhook": WebhookTarget.from_environ(clock),
            "celery": CeleryTarget.from_environ(),
            "command": CommandTarget.from_environ(),
            "system": SystemTarget(database, clock),
        }
    )


def jsonable(value: Any) -> Any:
    """A target's return value as stored: itself when JSON-able, else its repr."""
    if value is None or isinstance(value, str | int | bool):  # most results: no encoding
        return value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"repr": repr(value)}
    return value


@dataclass(frozen=True, slots=True)
class _Work:
    """A claimed item with what running it needs (looked up in the claim's transaction)."""

    item: QueueItem
    job: Job | None
    schedule: str | None


class Worker:
    """One worker's loop over the queue: batches claimed, run `concurrency` at a time."""

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
        concurrency: int = 1,
        claim_batch: int | None = None,
        flush_after: float = DEFAULT_FLUSH_AFTER,
        pool: str = "thread",
        tenant_limit: int | None = None,
        watch: float = DEFAULT_WATCH,
    ) -> None:
        if concurrency < 1 or (claim_batch is not None and claim_batch < 1):
            raise ValueError("concurrency and claim_batch must be at least 1")
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {', '.join(POOLS)}")
        if tenant_limit is not None and tenant_limit < 1:
            raise ValueError("tenant_limit must be at least 1")
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
        self.concurrency = concurrency
        # One item per step unless asked: `cronplane worker` passes its --claim-batch.
        self.claim_batch = claim_batch or concurrency
        self.flush_after = flush_after
        self._item_seconds = 0.0  # a running mean of one item's wall time (0: unknown)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._beats: Heartbeat | None = None
        # Platform limit: running items per tenant (CRONPLANE_TENANT_MAX_CONCURRENCY).
        self.tenant_limit = tenant_limit
        self.watch = watch
        self.processes = ProcessPool(concurrency, clock.monotonic) if pool == "process" else None
        # One stop flag per held item, set when its cancel request is seen.
        self._stops: dict[UUID, threading.Event] = {}
        self._fair_after = float("-inf")  # monotonic: the next claim in turns
        # When items fired ahead become claimable (wake(at=…)); None: no such wait.
        self._wake_at: datetime | None = None

    # -- one step ----------------------------------------------------------------

    def run_once(self) -> bool:
        """Claim a batch, run it, record its outcomes; False when nothing was available."""
        # In turns by tenant (queue.claim_batch) at the first claim and then at
        # least every FAIR_CLAIM_EVERY seconds; in the claim index's order
        # between (the turns' statement costs a claim ~25 % more on SQLite).
        mono = self.clock.monotonic()
        fair = mono >= self._fair_after
        if fair:
            self._fair_after = mono + FAIR_CLAIM_EVERY
        with self.database.begin() as conn:
            claimed = limits.claim(
                conn,
                self.name,
                self.clock.now(),
                self.lease,
                self.limit(),
                tenant_limit=self.tenant_limit,
                fair=fair,
            )
            if not claimed:
                return False
            batch = self._lookups(conn, claimed)
        self._stops.update((item.id, threading.Event()) for item in claimed)
        beats = self._heartbeat()
        if beats is not None:
            beats.hold(item.id for item in claimed)
        started = self.clock.monotonic()
        try:
            self._run_batch(batch)
        finally:
            if beats is not None:
                beats.drop(item.id for item in claimed)
            for item in claimed:
                self._stops.pop(item.id, None)
        per_item = (
            (self.clock.monotonic() - started) * min(self.concurrency, len(batch)) / len(batch)
        )
        self._item_seconds = (
            per_item if not self._item_seconds else (self._item_seconds + per_item) / 2
        )
        return True

    def limit(self) -> int:
        """How many items the next claim takes: `claim_batch`, fewer while items are slow."""
        if self._item_seconds <= 0:
            return self.claim_batch
        fits = int(self.concurrency * BATCH_SECONDS / self._item_seconds)
        return max(min(self.concurrency, self.claim_batch), min(self.claim_batch, fits))

    def _lookups(self, conn: Connection, claimed: Sequence[QueueItem]) -> list[_Work]:
        """Each item's job and schedule name, read once per distinct key."""
        jobs: dict[tuple[str, str, str], Job | None] = {}
        names: dict[UUID, str | None] = {}
        batch = []
        for item in claimed:
            key = (item.tenant, item.stack, item.job)
            if key not in jobs:
                jobs[key] = get_job(conn, *key)
            sid = item.schedule_id
            if sid is not None and sid not in names:
                names[sid] = name_of(conn, sid)
            batch.append(_Work(item, jobs[key], names.get(sid) if sid else None))
        return batch

    def _run_batch(self, batch: list[_Work]) -> None:
        """Run every item (unless stopping), recording outcomes in groups."""
        pending: list[RunOutcome] = []
        unstarted: list[QueueItem] = []
        oldest = 0.0

        def collect(outcome: RunOutcome | QueueItem) -> None:
            nonlocal oldest
            if isinstance(outcome, QueueItem):
                unstarted.append(outcome)
                return
            if not pending:
                oldest = self.clock.monotonic()
            pending.append(outcome)
            if self.clock.monotonic() - oldest >= self.flush_after:
                self._record(pending)
                pending.clear()

        # "Now" for the expiry checks, read once per batch and carried forward by
        # the monotonic clock: on PostgreSQL `clock.now()` is a round trip to the
        # database, which per item cost ten times the item itself (bench/e2e_bench.py).
        read_at, read_mono = self.clock.now(), self.clock.monotonic()

        def now() -> datetime:
            return read_at + timedelta(seconds=self.clock.monotonic() - read_mono)

        futures: list[Future[RunOutcome | QueueItem]] = []
        try:
            if self.concurrency == 1 or len(batch) == 1:
                for work in batch:
                    collect(self._run_unless_stopping(work, now))
            else:
                futures = [
                    self._executor().submit(self._run_unless_stopping, w, now) for w in batch
                ]
                for future in as_completed(futures):
                    collect(future.result())
        finally:
            # After a failed write, the targets still running end before their
            # claims are let go (their leases lapse; the sweep requeues them).
            wait(futures)
            # Outcomes already known are recorded even when a later write failed.
            self._record(pending)
            self._release(unstarted)

    def _run_unless_stopping(
        self, work: _Work, now: Callable[[], datetime]
    ) -> RunOutcome | QueueItem:
        """The item's outcome; the item itself, unrun, when stopping or past its expiry.

        An item that expired while it waited for its turn in the batch is given
        back, not run: queued again, the sweep expires it, as it would have
        had it never been claimed. `now` is the batch's clock (see _run_batch).
        """
        expires = work.item.expires_at
        if self._stop.is_set() or (expires is not None and expires <= now()):
            return work.item
        return self._run(work)

    def _run(self, work: _Work) -> RunOutcome:
        """Run one item's target; its failure is data (an outcome), not an exception."""
        item, job = work.item, work.job
        policy = RetryPolicy.from_options(job.options if job else {})
        if job is None:
            return RunOutcome(item, policy, error="job missing: nothing to run")
        context = RunContext(
            tenant=item.tenant,
            stack=item.stack,
            environment=item.environment,
            job=item.job,
            item_id=item.id,
            schedule_id=item.schedule_id,
            schedule=work.schedule,
            scheduled_for=item.scheduled_for,
            attempt=item.attempts,
            source=item.source,
            options=dict(job.options),
            timeout=item.timeout,
        )
        stop = self._stops.get(item.id) or threading.Event()
        started = self.clock.monotonic()
        try:
            runner, spec = self.targets.resolve(job.target)
            if self.processes is not None and isinstance(runner, PythonTarget):
                result = self.processes.run(
                    spec, dict(item.payload), context, timeout=item.timeout, stop=stop
                )
            else:
                result = runner.run(spec, dict(item.payload), context)
                # A thread cannot be stopped: the run ended, and is judged now.
                if stop.is_set():
                    raise RunStopped("cancelled")
                if item.timeout is not None and self.clock.monotonic() - started > item.timeout:
                    raise RunStopped("timeout")
        except RunStopped as stopped:
            return self._stopped(item, policy, stopped.reason)
        except PermanentFailure as error:  # another attempt cannot help (e.g. HTTP 4xx)
            log.info("item %s (%s) failed permanently: %s", item.id, item.job, error)
            return RunOutcome(item, policy, error=str(error)[:ERROR_LIMIT])
        except Exception as error:  # the job's own failure is data, not a crash
            text = "".join(traceback.format_exception_only(error)).strip()
            log.info("item %s (%s) failed: %s", item.id, item.job, text)
            return RunOutcome(item, policy, error=text[:ERROR_LIMIT], retry=True)
        return RunOutcome(item, policy, result=jsonable(result))

    def _stopped(self, item: QueueItem, policy: RetryPolicy, reason: str) -> RunOutcome:
        """A run stopped at its timeout (retried like a failure) or on a cancel request."""
        if reason == "cancelled":
            log.info("item %s (%s) cancelled while running", item.id, item.job)
            return RunOutcome(item, policy, error="cancelled", stopped="cancelled")
        text = str(
            RunTimedOut(f"{item.job} ran past its timeout of {item.timeout:g}s and was stopped")
        )
        log.info("item %s (%s) timed out", item.id, item.job)
        return RunOutcome(item, policy, error=text, retry=True, stopped="timeout")

    def _cancel_requested(self, item_ids: set[UUID]) -> None:
        """The heartbeat's watch saw cancel requests: stop those runs."""
        for item_id in item_ids:
            stop = self._stops.get(item_id)
            if stop is not None:
                stop.set()

    # -- recording ---------------------------------------------------------------

    def _record(self, group: Sequence[RunOutcome]) -> None:
        """Write a group of outcomes and their events in one transaction, then report them."""
        kinds = record(self.database, self.clock, self.name, self.jitter, group)
        if self.on_outcome is not None:
            for kind in kinds:
                self.on_outcome(kind)

    def _release(self, unstarted: Sequence[QueueItem]) -> None:
        """Give back claims that never ran (stopping): queued again, the attempt undone."""
        if unstarted:
            with self.database.begin() as conn:
                outcomes.release(conn, [i.id for i in unstarted], self.name, self.clock.now())

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="cronplane-run")
        return self._pool

    def _heartbeat(self) -> Heartbeat | None:
        if self.heartbeat and self._beats is None:
            self._beats = Heartbeat(
                self.database,
                self.clock,
                self.name,
                self.lease,
                on_cancel=self._cancel_requested,
                watch=self.watch,
            )
        return self._beats

    # -- the loop ----------------------------------------------------------------

    def wake(self, at: datetime | None = None) -> None:
        """Cut the idle wait short: an item was enqueued in-process, claimable now or `at`
        (a dispatcher firing ahead queues an instant's items before it)."""
        if at is not None and (self._wake_at is None or at < self._wake_at):
            self._wake_at = at
        self._wake.set()

    def idle_wait(self) -> float:
        """How long an idle step waits: a poll, or less when items become claimable sooner."""
        wait = self.poll
        at = self._wake_at
        if at is not None:
            until = (at - self.clock.now()).total_seconds()
            if until < 0:
                self._wake_at = None  # passed: the claim after it found what there was
            wait = min(wait, max(0.0, until))
        return wait

    def stop(self) -> None:
        """Ask `run` to return after the items in flight (unstarted claims are given back)."""
        self._stop.set()
        self._wake.set()

    def close(self) -> None:
        """Stop the heartbeat and the run pool's threads (`run` does it when it returns)."""
        if self._beats is not None:
            self._beats.stop()
            self._beats.join()
            self._beats = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self.processes is not None:
            self.processes.close()

    def run(self) -> None:
        """Run items until `stop()`; idle polls every `poll` seconds; back off on DB errors."""
        failures = 0
        try:
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
                    self.clock.wait(self.idle_wait(), self._wake)
        finally:
            self.close()
