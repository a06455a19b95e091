"""The built-in worker: claim what its slots can start, run it, record what really happened.

A worker has `concurrency` run slots (threads; with `pool="process"` each slot hands
`python:` targets to a child process): how it claims is in processes.claiming, the slots
in processes.run_slots. The rule it keeps (docs/architecture.md, "A worker starts what it
claims"):

1. **It claims only what it can start now** (or at the instant a claim made ahead of it
   is for: processes.claiming). A claim (one transaction, no double claim) takes one item
   per free slot, more only while items are known to be short: as many as the free slots
   get through in half of `START_BOUND` at the recent pace (at most `claim_batch`). The
   items become `running`; each is invoked within `START_BOUND` of the claim (of its
   instant) or given back.
2. **A free slot takes the next claimed item at once**, from one local queue that every
   slot draws on: no item waits behind a slow one while a slot is free. One still
   unstarted after `START_BOUND` is given back (`queued`, the attempt undone).
3. **A cancel before the start means it never starts.** Just before an item is invoked
   its stop flag is read, at most `CHECK_EVERY` old (stop_flags): an item asked to stop is
   recorded `cancelled` with its actor and nothing of its target runs. It is still ours:
   only the sweep takes a claim away, once its lease (far longer) lapsed.
4. **Outcomes are recorded in groups** (store.outcomes, recorder) with the instants each
   target was invoked and returned (item_runner): once no claimed item waits to start and
   no part of a claim read ahead is coming, or the oldest waited `flush_after`. Every
   write is conditional on the lease: an item recovered meanwhile records nothing.

:meth:`Worker.run_once` is one step (claim, run, record); :meth:`Worker.run` claims
whenever a slot is free and records as it goes. The heartbeat extends the lease of every
item held. A worker that dies leaves its claims `running`; once their leases lapse the
sweep requeues them. Nothing runs twice within one attempt, nothing is marked succeeded
that did not run, and a worker asked to stop gives its unstarted claims back.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from uuid import UUID

from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core.backoff import outage_delay
from cronplane.core.model import QueueItem
from cronplane.processes.claimed import Claimed
from cronplane.processes.claiming import Claimer
from cronplane.processes.heartbeat import DEFAULT_WATCH, Heartbeat
from cronplane.processes.item_runner import ItemRunner, Work, default_targets
from cronplane.processes.recorder import RunOutcome, record
from cronplane.processes.run_slots import START_BOUND, Pace, RunSlots
from cronplane.processes.stop_flags import CHECK_EVERY, StopFlags
from cronplane.processes.worker_clock import WorkerClock
from cronplane.store import cancels, outcomes
from cronplane.store.database import Database
from cronplane.targets import Targets
from cronplane.targets.processes import ProcessPool

log = logging.getLogger(__name__)

DEFAULT_LEASE = 300.0
DEFAULT_POLL = 1.0
DEFAULT_FLUSH_AFTER = 1.0  # seconds an outcome may wait for its group
DEFAULT_CLAIM_BATCH = 1024  # `cronplane worker|serve`; the class itself claims `concurrency`
# Woken for an instant this close (seconds), an idle worker claims what a claim at it
# would take ahead of it (processes.claiming): at the instant it only starts the items.
READ_AHEAD = 0.5
# A claim made ahead has its stop flags read this long (s) before its instant, not at it.
FLAGS_BEFORE = CHECK_EVERY / 2
POOLS = ("thread", "process")


class Worker:
    """One worker's loop over the queue: claims its free slots can start, run at once."""

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
        pace: float | None = None,
    ) -> None:
        """`pace`: seconds one item is expected to take until the first is timed (None:
        unknown, so a claim takes one item per free slot; 0: short, a full batch)."""
        if concurrency < 1 or (claim_batch is not None and claim_batch < 1):
            raise ValueError("concurrency and claim_batch must be at least 1")
        if pool not in POOLS:
            raise ValueError(f"pool must be one of {', '.join(POOLS)}")
        if tenant_limit is not None and tenant_limit < 1:
            raise ValueError("tenant_limit must be at least 1")
        if lease <= START_BOUND * 4:  # a claim must stay ours until it starts
            raise ValueError(f"lease must be longer than {START_BOUND * 4:g} seconds")
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
        self.claim_batch = claim_batch or concurrency
        self.flush_after = flush_after
        # Platform limit: running items per tenant (CRONPLANE_TENANT_MAX_CONCURRENCY).
        self.tenant_limit = tenant_limit
        self.watch = watch
        self.processes = ProcessPool(concurrency, clock.monotonic) if pool == "process" else None
        self.runner = ItemRunner(self.targets, clock.monotonic, self.processes)
        self.pace = Pace(pace)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._beats: Heartbeat | None = None
        self.slots = RunSlots(concurrency, clock.monotonic, self._start, flush_after)
        self.claimer = Claimer(
            database,
            clock,
            self.name,
            self.lease,
            claim_batch=self.claim_batch,
            tenant_limit=tenant_limit,
        )
        self.stops = StopFlags(database, clock.monotonic, self.name)
        # When items fired ahead become claimable (wake(at=…)); None: no such wait.
        self._wake_at: datetime | None = None
        self._read_at: datetime | None = None  # the instant to read a claim ahead for
        self.worker_clock = WorkerClock(clock)
        self.now = self.worker_clock.now  # the worker's clock (item_runner's two readings)

    # -- one step ----------------------------------------------------------------

    def run_once(self) -> bool:
        """Claim what the free slots can start, run it, record it (and what a lost connection
        left unrecorded); False when nothing was available."""
        if not self._claim() and not self.slots.pending:
            return False
        self._drive(until_idle=True)
        return True

    def limit(self, free: int | None = None) -> int:
        """How many items the next claim takes (Pace.claim_size)."""
        return self.pace.claim_size(self.concurrency if free is None else free, self.claim_batch)

    def _claim(self) -> bool:
        """One claim: the next part of a claim read ahead once its instant came, else one
        for the free slots (nothing when none is free or claims still wait)."""
        try:
            return self._claim_next()
        finally:  # the slots hand the worker back as soon as the next part is due
            self.slots.low_water = self._part_due()

    def _claim_next(self) -> bool:
        held = self.claimer.due(self.clock.monotonic())
        if held is not None:  # claimed ahead, and their instant came: they start
            self.slots.add(held.works, self.pace.slots_for(held.sure), held.claimed, held.sure)
            return True
        ahead = self.claimer.ahead
        if ahead is not None and self.slots.waiting_count() <= self._part_due():
            now, anchor = self.clock.now(), self.clock.monotonic()
            batch = self.claimer.claim_part(now, self.limit()) if ahead.at <= now else []
            if batch:
                self._took(batch, now, anchor)
                return True
        free = self.slots.free()
        if free <= 0 or self.claimer.held is not None:  # a held claim's slots are its instant's
            return False
        # Read together before the claim: the anchor of the worker's clock.
        now, anchor = self.clock.now(), self.clock.monotonic()
        batch = self.claimer.claim(now, self.limit(free))
        if not batch:
            return False
        self._took(batch, now, anchor)
        return True

    def _took(
        self, batch: Sequence[Work], now: datetime, anchor: float, start: bool = True
    ) -> None:
        """Claimed: hold the items and, unless claimed ahead of their instant, queue them."""
        self.worker_clock.anchor(now, anchor)
        self.stops.hold(work.item.id for work in batch)
        self._heartbeat()  # made here, in the one thread that claims
        if start:
            self.slots.add(batch, self.pace.slots_for(len(batch)))

    def read_ahead(self) -> None:
        """Idle, woken for an instant under READ_AHEAD away: read what a claim at it takes and
        claim ahead what the slots can start then (Pace.ahead_size); the rest at it, in parts."""
        if (held := self.claimer.held) is not None:
            if held.due - self.clock.monotonic() <= FLAGS_BEFORE:
                self.stops.fresh(held.claimed)
            return
        at = self._read_at
        if at is None or at != self._wake_at or self.tenant_limit is not None:
            return  # a tenant limit counts what runs at the claim: claimed the usual way
        if (at - self.clock.now()).total_seconds() > READ_AHEAD or not self.slots.idle():
            return
        self.claimer.read_ahead(at)
        now, anchor = self.clock.now(), self.clock.monotonic()
        size, sure = self.pace.ahead_size(self.concurrency, self.claim_batch)
        if works := self.claimer.claim_ahead(now, anchor, size, sure):
            self._took(works, now, anchor, start=False)

    def _part_due(self) -> int:
        """The next part of a claim read ahead is due once a quarter of it waits (half the
        last part): claimed while the slots run the rest. -1: no part is coming."""
        ahead = self.claimer.ahead
        return -1 if ahead is None else ahead.part // 4

    # -- a slot's start ---------------------------------------------------------

    def _start(self, claimed: Claimed) -> RunOutcome | QueueItem:
        """Start one claimed item: its outcome, or itself, unrun, to give back."""
        work, item = claimed.work, claimed.work.item
        mono = self.clock.monotonic()
        expires = item.expires_at
        # Given back: stopping, past its expiry (the sweep expires it, as had it
        # never been claimed), or it waited past the start bound.
        if (
            self._stop.is_set()
            or (expires is not None and expires <= self.now())
            or mono - claimed.startable > START_BOUND
        ):
            return item
        if not self.stops.fresh(claimed.claimed):
            return item  # not started on a guess
        stop = self.stops.flag(item.id)
        if stop.is_set():
            return self.runner.never_started(item, work.job)
        # Held by the heartbeat from its start: a run may outlast the lease.
        if self._beats is not None:
            self._beats.hold([item.id])
        outcome = self.runner.run(work, stop, self.now)
        if outcome.ran is not None:
            self.pace.timed(self.clock.monotonic() - mono)
        return outcome

    # -- recording ---------------------------------------------------------------

    def _drive(self, *, until_idle: bool, timeout: float | None = None) -> None:
        """Record outcomes and give back stale claims as the slots produce them (RunSlots.drive)."""
        self.slots.drive(self._write, until_idle=until_idle, timeout=timeout)

    def _write(self, group: list[RunOutcome], back: list[QueueItem]) -> None:
        try:
            self._record(group)
        finally:
            self._release(back)

    def _record(self, group: Sequence[RunOutcome]) -> None:
        """Write a group of outcomes and their events in one transaction, then report them.
        A connection lost meanwhile (a failover) keeps the group, and its items' heartbeat,
        for the next step: the runs happened, and an item left `running` would run again
        once its lease lapsed (the writes are conditional on the lease: twice is safe)."""
        if not group:
            return
        try:
            kinds = record(self.database, self.clock, self.name, self.jitter, group)
        except (OperationalError, InterfaceError):
            self.slots.keep(group)  # written at the next step
            raise
        except BaseException:
            self._forget([o.item.id for o in group])
            raise
        self._forget([o.item.id for o in group])
        if self.on_outcome is not None:
            for kind in kinds:
                self.on_outcome(kind)

    def _release(self, unstarted: Sequence[QueueItem]) -> None:
        """Give back claims that never started: queued again, the attempt undone; those asked
        to stop meanwhile are recorded cancelled (they never ran)."""
        if not unstarted:
            return
        ids = [i.id for i in unstarted]
        try:
            with self.database.begin() as conn:
                outcomes.release(conn, ids, self.name, self.now())
                _, asked = cancels.held(conn, ids, self.name)
        finally:
            self._forget(ids)
        self._record([ItemRunner.never_started(i, None) for i in unstarted if i.id in asked])

    def _forget(self, ids: Sequence[UUID]) -> None:
        if self._beats is not None:
            self._beats.drop(ids)
        self.stops.drop(ids)

    def _heartbeat(self) -> Heartbeat | None:
        if self.heartbeat and self._beats is None:
            self._beats = Heartbeat(
                self.database,
                self.clock,
                self.name,
                self.lease,
                on_cancel=self.stops.asked,
                watch=self.watch,
            )
        return self._beats

    # -- the loop ----------------------------------------------------------------

    def wake(self, at: datetime | None = None, *, read_ahead: bool = True) -> None:
        """Cut the idle wait short: an item was enqueued in-process, claimable now or `at`
        (a dispatcher firing ahead queues an instant's items before it); `read_ahead`:
        read what a claim at `at` takes before it (one worker of a node does)."""
        if at is not None and (self._wake_at is None or at < self._wake_at):
            self._wake_at = at
            self._read_at = at if read_ahead else None
        self._wake.set()
        self.slots.notify()

    def idle(self) -> bool:
        """No slot busy and no claimed item waiting."""
        return self.slots.idle()

    def idle_wait(self) -> float:
        """How long an idle step waits: a poll, or less when items become claimable sooner."""
        wait = self.poll
        at = self._wake_at
        if at is not None:
            until = (at - self.clock.now()).total_seconds()
            if until < 0:
                self._wake_at = None  # passed: the claim after it found what there was
            wait = min(wait, max(0.0, until))
        if (held := self.claimer.held) is not None:  # claimed ahead: woken FLAGS_BEFORE their
            until = held.due - self.clock.monotonic()  # instant, then at it
            wait = min(wait, max(0.0, until - FLAGS_BEFORE if until > FLAGS_BEFORE else until))
        return wait

    def stop(self) -> None:
        """Ask `run` to return after the items in flight (unstarted claims are given back)."""
        self._stop.set()
        self.wake()

    def close(self) -> None:
        """Stop the heartbeat and the run pool's threads (`run` does it when it returns)."""
        self.slots.shutdown()
        held, self.claimer.held = self.claimer.held, None
        try:  # what finished is recorded, what never started given back
            self._release([work.item for work in held.works] if held else [])
            self._drive(until_idle=True)
        except SQLAlchemyError as error:  # their leases lapse; the sweep requeues them
            log.warning("recording the last outcomes failed: %s", error)
        if self._beats is not None:
            self._beats.stop()
            self._beats.join()
            self._beats = None
        if self.processes is not None:
            self.processes.close()

    def run(self) -> None:
        """Run items until `stop()`: claim whenever a slot is free, record as outcomes come;
        idle polls every `poll` seconds (sooner when woken); back off on database errors."""
        failures = 0
        if self.processes is not None:
            self.processes.warm()
        try:
            while not self._stop.is_set():
                try:
                    self._wake.clear()
                    claimed = self._claim()
                    failures = 0
                    busy = self.slots.active()
                    if claimed:
                        self._drive(until_idle=False, timeout=0)
                    elif busy:
                        # Running: record as outcomes come, and look for more work
                        # at least every poll (a slot may be free).
                        self._drive(until_idle=False, timeout=self.idle_wait())
                    else:
                        self.read_ahead()
                        self.clock.wait(self.idle_wait(), self._wake)
                except Exception as error:  # database down, or a bug: keep the thread alive
                    failures += 1
                    delay = outage_delay(failures)
                    if isinstance(error, SQLAlchemyError):
                        log.warning("worker step failed (%s); retrying in %.1fs", error, delay)
                    else:
                        log.exception("worker step crashed; retrying in %.1fs", delay)
                    self.clock.wait(delay, self._wake)
        finally:
            self.close()
