"""The built-in worker: claim what its slots can start, run it, record what really happened.

A worker has `concurrency` run slots (threads; with `pool="process"` each
slot hands `python:` targets to a child process). The rule it keeps
(docs/architecture.md, "A worker starts what it claims"):

1. **It claims only what it can start now.** A claim (one transaction:
   `store.limits.claim`, no double claim) takes one item per free slot, more
   only while items are known to be short: as many as the free slots get
   through in half of `START_BOUND` at the recent pace (at most
   `claim_batch`). The claim makes the items `running`, with this attempt's
   start; each is invoked within `START_BOUND` of it or given back.
2. **A free slot takes the next claimed item at once**, from one local queue
   that every slot draws on: no item waits behind a slow one while a slot is
   free. A claimed item still unstarted `START_BOUND` after its claim is
   given back (`queued`, the attempt undone) for another worker or slot.
3. **A cancel before the start means it never starts.** Just before an item
   is invoked its stop flag is read; the flags are set from one read of this
   worker's items asked to stop (`cancels.asked_of`), made again whenever the
   last is older than `CHECK_EVERY` (and by the heartbeat's watch). An item asked
   to stop is recorded `cancelled` with its actor and nothing of its target runs.
   It is still ours: only the sweep takes a claim away, once its lease lapsed,
   and a claim starts within `START_BOUND` (far inside the lease) or not at all.
4. **Outcomes are recorded in groups** (store.outcomes, recorder), each
   with the instants the target was invoked and returned (item_runner):
   a group is written as soon as no more claimed items wait to start, or
   once its oldest outcome has waited `flush_after`. Every write is
   conditional on the lease: an item recovered meanwhile records nothing.

:meth:`Worker.run_once` is one step (claim, run, record, all done when it
returns); :meth:`Worker.run` claims whenever a slot is free and records as
it goes. The heartbeat thread extends the lease of every item held.

A worker that dies leaves its claimed items `running` with leases that
lapse; the housekeeping sweep requeues them. Nothing runs twice within one
attempt, and nothing is marked succeeded that did not run. A worker asked to
stop gives its unstarted claims back.
"""

from __future__ import annotations

import logging
import math
import os
import random
import socket
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from uuid import UUID

from sqlalchemy import Connection
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core.backoff import outage_delay
from cronplane.core.model import QueueItem
from cronplane.processes.claimed import Claimed, ReadAhead
from cronplane.processes.heartbeat import DEFAULT_WATCH, Heartbeat
from cronplane.processes.item_runner import ItemRunner, Work, default_targets
from cronplane.processes.recorder import RunOutcome, record
from cronplane.store import cancels, claims, limits, outcomes
from cronplane.store.database import Database
from cronplane.store.jobs import jobs_by_key
from cronplane.store.schedules import names_of
from cronplane.targets import Targets
from cronplane.targets.processes import ProcessPool

log = logging.getLogger(__name__)

DEFAULT_LEASE = 300.0
DEFAULT_POLL = 1.0
DEFAULT_FLUSH_AFTER = 1.0  # seconds an outcome may wait for its group
# A claimed item is invoked within this many seconds of its claim, or given back.
START_BOUND = 0.25
# Before invoking a claimed item, the database is asked which of this worker's items
# were asked to stop whenever its last answer is older than this (seconds).
CHECK_EVERY = 0.02
# A claim starts as many slots as the recent pace says drain it within half of
# START_BOUND (one, for short items: on CPython, threads taking turns at no-ops only
# contend for the interpreter); when no slot has taken an item for this long while
# items wait, every free slot starts (a slow item must not hold the rest).
SPREAD_AFTER = 0.005
DEFAULT_CLAIM_BATCH = 1024  # `cronplane worker|serve`; the class itself claims `concurrency`
# A worker claims in turns by tenant at least this often (seconds), so a
# tenant's item in the claim window starts within about this long of
# reaching it, whatever another tenant's backlog; other claims take the
# claim index's order, which costs less.
FAIR_CLAIM_EVERY = 0.25
# Woken for an instant this close (seconds), an idle worker reads what a claim at it
# would take (claims.peek) and at the instant only writes the claim (claims.claim_read).
READ_AHEAD = 0.5
POOLS = ("thread", "process")
_PACE_WEIGHT = 0.2  # of the newest item in the running mean of an item's time


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
        self._item_seconds = pace  # a running mean of one item's run time (None: unknown)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._beats: Heartbeat | None = None
        # The slots' shared state, under one condition: claimed items waiting for
        # a slot, busy slots, outcomes waiting for their group, claims to give back.
        self._cond = threading.Condition()
        self._waiting: deque[Claimed] = deque()
        self._busy = 0
        self._last_take = 0.0  # monotonic: when a slot last took a claimed item (or a claim came)
        self._pending: list[RunOutcome] = []
        self._oldest = 0.0  # monotonic: when the oldest pending outcome arrived
        self._unstarted: list[QueueItem] = []
        self._checked = -math.inf  # monotonic: when the last cancel check was asked
        self._check_lock = threading.Lock()
        # One stop flag per held item, set when its cancel request is seen.
        self._stops: dict[UUID, threading.Event] = {}
        self._fair_after = float("-inf")  # monotonic: the next claim in turns
        # When items fired ahead become claimable (wake(at=…)); None: no such wait.
        self._wake_at: datetime | None = None
        self._ahead: ReadAhead | None = None
        self._read_at: datetime | None = None  # the instant to read a claim ahead for
        # "Now" read at the last claim, carried forward by the monotonic clock: on
        # PostgreSQL `clock.now()` is a round trip, ten times a short item's cost.
        self._anchor: tuple[datetime, float] | None = None

    # -- one step ----------------------------------------------------------------

    def run_once(self) -> bool:
        """Claim what the free slots can start, run it, record it (and what a lost connection
        left unrecorded); False when nothing was available."""
        if not self._claim() and not self._pending:
            return False
        self._drive(until_idle=True)
        return True

    def limit(self, free: int | None = None) -> int:
        """How many items the next claim takes: one per free slot, more only while items are
        known to be short (as many as the free slots run in half of START_BOUND)."""
        free = self.concurrency if free is None else free
        seconds, per_slot = self._item_seconds, 1
        if seconds is not None:
            per_slot = self.claim_batch if seconds <= 0 else int(START_BOUND / 2 / seconds)
        return max(1, min(self.claim_batch, free * max(1, per_slot)))

    def _claim(self) -> bool:
        """One claim: the next part of a claim read ahead once its instant came, else one
        for the free slots (nothing when none is free or claims still wait)."""
        ahead = self._ahead
        if ahead is not None and self._wants_part(ahead):
            now, anchor = self.clock.now(), self.clock.monotonic()
            batch = self._claim_ahead(now, ahead) if ahead.at <= now else []
            if batch:
                self._took(batch, now, anchor)
                return True
        with self._cond:
            free = self.concurrency - self._busy
            if free <= 0 or self._waiting:
                return False
        # "now" and the monotonic reading taken together, before the claim: the anchor of
        # the worker's clock (paired with a reading after it, it ran behind by its duration).
        now, anchor = self.clock.now(), self.clock.monotonic()
        # In turns by tenant (claims.claim_batch) at the first claim and then at
        # least every FAIR_CLAIM_EVERY seconds; in the claim index's order
        # between (the turns' statement costs a claim ~25 % more on SQLite).
        fair = self._fair_now()
        with self.database.begin() as conn:
            claimed = limits.claim(
                conn,
                self.name,
                now,
                self.lease,
                self.limit(free),
                tenant_limit=self.tenant_limit,
                fair=fair,
            )
            if not claimed:
                return False
            batch = self._lookups(conn, claimed)
        self._took(batch, now, anchor)
        return True

    def _fair_now(self) -> bool:
        """Whether this claim goes in turns by tenant (then not again for FAIR_CLAIM_EVERY)."""
        mono = self.clock.monotonic()
        if mono < self._fair_after:
            return False
        self._fair_after = mono + FAIR_CLAIM_EVERY
        return True

    def _took(self, batch: Sequence[Work], now: datetime, anchor: float) -> None:
        """Claimed: queue the items for the slots and start the slots they need."""
        mono = self.clock.monotonic()
        self._anchor = (now, anchor)
        self._stops.update((work.item.id, threading.Event()) for work in batch)
        self._heartbeat()  # made here, in the one thread that claims
        with self._cond:
            self._waiting.extend(Claimed(work, mono) for work in batch)
            self._last_take = mono
            slots = self._start_slots_locked(self._slots_for(len(batch)))
        for _ in range(slots):
            self._executor().submit(self._slot)

    def _slots_for(self, count: int) -> int:
        """How many slots `count` claimed items need: one each while the pace is unknown,
        else enough to start them all within half of START_BOUND at the recent pace."""
        seconds = self._item_seconds
        if seconds is None:
            return count
        return max(1, math.ceil(count * seconds / (START_BOUND / 2)))

    def _start_slots_locked(self, wanted: int) -> int:
        """Count up to `wanted` more busy slots (no more than are free or items wait); the
        caller submits that many `_slot`s."""
        slots = max(0, min(self.concurrency - self._busy, len(self._waiting), wanted))
        self._busy += slots
        return slots

    def _spread_locked(self) -> int:
        """Slots to add now: every free one when items wait and no slot took one for
        SPREAD_AFTER (the running ones are held by slow items)."""
        if not self._waiting or self.clock.monotonic() - self._last_take < SPREAD_AFTER:
            return 0
        return self._start_slots_locked(len(self._waiting))

    def read_ahead(self) -> None:
        """Idle and woken for an instant less than READ_AHEAD away: read and decode what a
        claim at it would take, so that at the instant the claim only writes."""
        at = self._read_at
        if at is None or at != self._wake_at or self.tenant_limit is not None:
            return  # a tenant limit counts what runs at the claim: claimed the usual way
        if self._ahead is not None and self._ahead.at == at:
            return
        if (at - self.clock.now()).total_seconds() > READ_AHEAD:
            return
        with self._cond:
            if self._busy or self._waiting:
                return
        fair = self._fair_now()
        # As much as one claim may take; each part claimed at the instant is sized as a
        # claim is (`limit`).
        with self.database.read() as conn:
            items = claims.peek(conn, at, self.claim_batch, fair=fair)
            self._ahead = ReadAhead(at, deque(self._lookups(conn, items))) if items else None

    def _wants_part(self, ahead: ReadAhead) -> bool:
        """Whether the next part is due: once a quarter of it waits (half the last part),
        so it is claimed while the slots run the rest, and none waits long unchecked."""
        with self._cond:
            return len(self._waiting) <= ahead.part // 4

    def _claim_ahead(self, now: datetime, ahead: ReadAhead) -> list[Work]:
        """Claim the next part of what was read ahead, those of it still claimable (others
        may have taken, cancelled or expired some meanwhile). Parts double from 32
        (`ReadAhead.part`): the first items start within a small claim's time of the instant, and
        the rest are claimed while they run. An instant long past is claimed afresh."""
        if (now - ahead.at).total_seconds() > START_BOUND:
            self._ahead = None
            return []
        size = min(ahead.part, self.limit(), len(ahead.works))
        part = [ahead.works.popleft() for _ in range(size)]
        ahead.part *= 2
        if not ahead.works:
            self._ahead = None
        works = {w.item.id: w for w in part}
        with self.database.begin() as conn:
            taken = claims.claim_read(conn, self.name, now, self.lease, (w.item for w in part))
        return [Work(item, works[item.id].job, works[item.id].schedule) for item in taken]

    def _lookups(self, conn: Connection, claimed: Sequence[QueueItem]) -> list[Work]:
        """Each item's job and schedule name, each kind in one read."""
        jobs = jobs_by_key(conn, ((i.tenant, i.stack, i.job) for i in claimed))
        names = names_of(conn, {i.schedule_id for i in claimed if i.schedule_id is not None})
        return [
            Work(
                item,
                jobs.get((item.tenant, item.stack, item.job)),
                names.get(item.schedule_id) if item.schedule_id else None,
            )
            for item in claimed
        ]

    def now(self) -> datetime:
        """The worker's clock: the last claim's "now" carried forward by the monotonic clock."""
        if self._anchor is None:
            return self.clock.now()
        at, mono = self._anchor
        return at + timedelta(seconds=self.clock.monotonic() - mono)

    # -- the slots ---------------------------------------------------------------

    def _slot(self) -> None:
        """A run slot: take the next claimed item at once, until none waits."""
        try:
            while True:
                with self._cond:
                    if not self._waiting:
                        return
                    claimed = self._waiting.popleft()
                    self._last_take = self.clock.monotonic()
                outcome = self._start(claimed)
                with self._cond:
                    if isinstance(outcome, RunOutcome):
                        if not self._pending:
                            self._oldest = self.clock.monotonic()
                        self._pending.append(outcome)
                    elif outcome is not None:
                        self._unstarted.append(outcome)
                    if not self._waiting or self._due_to_flush():
                        self._cond.notify_all()
        except Exception:  # a bug here must not leave the slot counted busy
            log.exception("a run slot failed")
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def _start(self, claimed: Claimed) -> RunOutcome | QueueItem | None:
        """Start one claimed item: its outcome; itself, unrun, to give back; None when lost."""
        work, item = claimed.work, claimed.work.item
        mono = self.clock.monotonic()
        expires = item.expires_at
        # Given back: stopping, past its expiry (the sweep expires it, as had it
        # never been claimed), or it waited past the start bound.
        if (
            self._stop.is_set()
            or (expires is not None and expires <= self.now())
            or mono - claimed.claimed > START_BOUND
        ):
            return item
        if mono - self._checked > CHECK_EVERY and not self._check():
            return item  # not started on a guess
        stop = self._stops.get(item.id) or threading.Event()
        if stop.is_set():
            return self.runner.never_started(item, work.job)
        # Held from its start: a claim is either started within START_BOUND or
        # given back, well inside its lease; a run may outlast the lease.
        if self._beats is not None:
            self._beats.hold([item.id])
        outcome = self.runner.run(work, stop, self.now)
        if outcome.ran is not None:
            # The slot's time for the item, its checks and bookkeeping included: what the
            # claim's size must fit in START_BOUND (the target's own time alone over-claims).
            took = self.clock.monotonic() - mono
            mean = self._item_seconds
            self._item_seconds = took if mean is None else mean + _PACE_WEIGHT * (took - mean)
        return outcome

    def _check(self) -> bool:
        """Ask which of this worker's items were asked to stop and set their stop flags: one
        read for every item held, shared by the slots; False when it could not be asked."""
        with self._check_lock:
            mono = self.clock.monotonic()  # before the read: its answer is at least this fresh
            if mono - self._checked <= CHECK_EVERY:
                return True  # another slot asked meanwhile
            try:
                with self.database.read() as conn:
                    asked = cancels.asked_of(conn, self.name)
            except SQLAlchemyError as error:
                log.warning("checking for cancel requests failed: %s", error)
                return False
            self._checked = mono
        self._cancel_requested(asked)
        return True

    def _due_to_flush(self) -> bool:
        return bool(self._pending) and self.clock.monotonic() - self._oldest >= self.flush_after

    # -- recording ---------------------------------------------------------------

    def _drive(self, *, until_idle: bool, timeout: float | None = None) -> None:
        """Record outcomes and give back stale claims as the slots produce them; return when
        the slots are idle (`until_idle`) or after `timeout` seconds without a reason to act."""
        while True:
            with self._cond:
                for _ in range(self._spread_locked()):
                    self._executor().submit(self._slot)
                stale = self._stale_locked()
                group: list[RunOutcome] = []
                # Written once no claimed item waits to start, nor is a claim read ahead
                # still being taken (its next part starts sooner than a group is written).
                more = bool(self._waiting) or self._ahead is not None
                if self._pending and (not more or self._due_to_flush()):
                    group, self._pending = self._pending, []
                back, self._unstarted = self._unstarted + stale, []
                idle = self._busy == 0 and not self._waiting
                if not group and not back:
                    if idle or (not until_idle and timeout is not None and timeout <= 0):
                        if idle and self._pending:
                            group, self._pending = self._pending, []
                        else:
                            return
                    else:
                        self._cond.wait(self._next_deadline(timeout))
                        timeout = 0 if timeout is not None else None
                        continue
            try:
                self._record(group)
            finally:
                self._release(back)

    def _stale_locked(self) -> list[QueueItem]:
        """Claimed items still waiting START_BOUND after their claim (all slots busy)."""
        stale: list[QueueItem] = []
        mono = self.clock.monotonic()
        while self._waiting and mono - self._waiting[0].claimed > START_BOUND:
            stale.append(self._waiting.popleft().work.item)
        return stale

    def _next_deadline(self, timeout: float | None) -> float:
        """How long the driver may sleep: until a group is due, a claim goes stale, or
        `timeout`."""
        mono = self.clock.monotonic()
        waits = [START_BOUND if timeout is None else timeout]
        if self._pending:
            waits.append(self._oldest + self.flush_after - mono)
        if self._waiting:
            waits.append(self._waiting[0].claimed + START_BOUND - mono)
            if self._busy < self.concurrency:
                waits.append(self._last_take + SPREAD_AFTER - mono)
        return max(0.001, min(waits))

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
            with self._cond:
                self._pending[:0], self._oldest = group, -math.inf  # written at the next step
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
        for item_id in ids:
            self._stops.pop(item_id, None)

    def _cancel_requested(self, item_ids: set[UUID]) -> None:
        """The heartbeat's watch saw cancel requests: stop those runs (or their starts)."""
        for item_id in item_ids:
            stop = self._stops.get(item_id)
            if stop is not None:
                stop.set()

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

    def wake(self, at: datetime | None = None, *, read_ahead: bool = True) -> None:
        """Cut the idle wait short: an item was enqueued in-process, claimable now or `at`
        (a dispatcher firing ahead queues an instant's items before it); `read_ahead`:
        read what a claim at `at` takes before it (one worker of a node does)."""
        if at is not None and (self._wake_at is None or at < self._wake_at):
            self._wake_at = at
            self._read_at = at if read_ahead else None
        self._wake.set()
        with self._cond:
            self._cond.notify_all()

    def idle(self) -> bool:
        """No slot busy and no claimed item waiting."""
        with self._cond:
            return not self._busy and not self._waiting

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
        self.wake()

    def close(self) -> None:
        """Stop the heartbeat and the run pool's threads (`run` does it when it returns)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        try:  # what finished is recorded, what never started given back
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
                    with self._cond:
                        busy = self._busy > 0 or bool(self._waiting) or bool(self._pending)
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
