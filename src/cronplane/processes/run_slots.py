"""A worker's run slots (processes.worker): claimed items wait in one local queue that every
slot draws on, and a free slot takes the next at once.

What the slots share sits under one condition: the claimed items waiting for a slot, how
many slots are busy, the outcomes waiting for their group, and the claims to give back.
A claim starts as many slots as its items need (`add`); when no slot has taken an item
for SPREAD_AFTER while items wait, every free slot starts (a slow item must not hold the
rest); a claimed item still unstarted START_BOUND after it became startable is handed
back to be given back (a guess, claimed ahead while the pace was unknown, as soon as slow
items have held every slot for GUESS_WAIT). `drive` hands the worker what to write as it
comes.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from cronplane.core.model import QueueItem
from cronplane.processes.claimed import Claimed
from cronplane.processes.item_runner import Work
from cronplane.processes.recorder import RunOutcome

log = logging.getLogger(__name__)

# A claimed item is invoked within this many seconds of its claim (of its instant, for a
# claim made ahead of it), or given back.
START_BOUND = 0.25
# A claim starts as many slots as the recent pace says drain it within half of
# START_BOUND (one, for short items: on CPython, threads taking turns at no-ops only
# contend for the interpreter); when no slot has taken an item for this long while
# items wait, every free slot starts (a slow item must not hold the rest).
SPREAD_AFTER = 0.005
# Items claimed ahead on a guess (the pace unknown, items taken as short) wait at most this
# long with every slot held and none taking an item: then they go back to the queue.
GUESS_WAIT = 0.025

_PACE_WEIGHT = 0.2  # of the newest item in the running mean of an item's time


class Pace:
    """How long one item holds a slot, checks and bookkeeping included (a running mean;
    None: unknown until one is timed, 0: known short): what a claim's size must fit in
    START_BOUND (the target's own time alone over-claims)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds

    def timed(self, took: float) -> None:
        mean = self.seconds
        self.seconds = took if mean is None else mean + _PACE_WEIGHT * (took - mean)

    def ahead_size(self, free: int, claim_batch: int) -> tuple[int, int]:
        """A claim made ahead of an instant: its size, and how many of it the pace rule
        claims. While the pace is unknown it takes what a claim of short items would, one
        item per free slot sure and the rest a guess (given back within GUESS_WAIT if the
        items prove slow), so a fresh worker's first instant starts as a later one does."""
        size = self.claim_size(free, claim_batch)
        return (claim_batch, size) if self.seconds is None else (size, size)

    def claim_size(self, free: int, claim_batch: int) -> int:
        """One item per free slot, more only while items are known to be short (as many as
        the free slots run in half of START_BOUND), at most `claim_batch`."""
        per_slot = 1
        if self.seconds is not None:
            per_slot = claim_batch if self.seconds <= 0 else int(START_BOUND / 2 / self.seconds)
        return max(1, min(claim_batch, free * max(1, per_slot)))

    def slots_for(self, count: int) -> int:
        """How many slots `count` claimed items need: one each while the pace is unknown,
        else enough to start them all within half of START_BOUND."""
        if self.seconds is None:
            return count
        return max(1, math.ceil(count * self.seconds / (START_BOUND / 2)))


# What a slot makes of a claimed item: its outcome, or itself, unrun, to give back.
Start = Callable[[Claimed], "RunOutcome | QueueItem"]


class RunSlots:
    """`concurrency` run slots (threads) over one queue of claimed items."""

    def __init__(
        self, concurrency: int, monotonic: Callable[[], float], start: Start, flush_after: float
    ) -> None:
        self.concurrency = concurrency
        self.monotonic = monotonic
        self.start = start
        self.flush_after = flush_after
        self.cond = threading.Condition()
        self.waiting: deque[Claimed] = deque()
        self.busy = 0
        self.last_take = 0.0  # monotonic: when a slot last took a claimed item (or a claim came)
        self.pending: list[RunOutcome] = []
        self.oldest = 0.0  # monotonic: when the oldest pending outcome arrived
        self.unstarted: list[QueueItem] = []
        # While a claim read ahead is taken in parts (set at each claim): the next part is
        # due once no more than this many claimed items wait (-1: no part is coming).
        self.low_water = -1
        self._pool: ThreadPoolExecutor | None = None

    def free(self) -> int:
        """Slots free, none when claimed items still wait for one."""
        with self.cond:
            return 0 if self.waiting else self.concurrency - self.busy

    def idle(self) -> bool:
        """No slot busy and no claimed item waiting."""
        with self.cond:
            return not self.busy and not self.waiting

    def active(self) -> bool:
        """A slot busy, a claimed item waiting, or an outcome not yet written."""
        with self.cond:
            return self.busy > 0 or bool(self.waiting) or bool(self.pending)

    def waiting_count(self) -> int:
        with self.cond:
            return len(self.waiting)

    def add(
        self,
        batch: Sequence[Work],
        slots: int,
        claimed: float | None = None,
        sure: int | None = None,
    ) -> None:
        """Queue claimed items, startable now, and start up to `slots` slots for them;
        `claimed`: when a claim made ahead of now was made (monotonic; default now);
        `sure`: how many of them the pace rule claimed (the rest, a guess: GUESS_WAIT)."""
        mono = self.monotonic()
        at = mono if claimed is None else claimed
        sure = len(batch) if sure is None else sure
        with self.cond:
            self.waiting.extend(Claimed(work, at, mono, n >= sure) for n, work in enumerate(batch))
            self.last_take = mono
            started = self._start_slots_locked(slots)
        for _ in range(started):
            self._executor().submit(self._slot)

    def notify(self) -> None:
        """Wake a driver waiting in `next_step`."""
        with self.cond:
            self.cond.notify_all()

    def keep(self, group: Sequence[RunOutcome]) -> None:
        """A group whose write failed on a lost connection: written at the next step."""
        with self.cond:
            self.pending[:0], self.oldest = list(group), -math.inf

    def drive(
        self,
        write: Callable[[list[RunOutcome], list[QueueItem]], None],
        *,
        until_idle: bool,
        timeout: float | None,
    ) -> None:
        """Hand `write` each group of outcomes and the claims to give back as the slots
        produce them; return when the slots are idle (`until_idle`) or after `timeout`
        seconds without a reason to act. While parts of a claim read ahead are coming
        (`low_water` set) outcomes wait for the last, and, not `until_idle`, it returns as
        soon as the next part is due: claimed first, its items start before the last
        part's outcomes are written."""
        while True:
            with self.cond:
                if not until_idle and len(self.waiting) <= self.low_water:
                    return
                for _ in range(self._spread_locked()):
                    self._executor().submit(self._slot)
                stale = self._stale_locked()
                group: list[RunOutcome] = []
                # Written once no claimed item waits to start, nor is a claim read ahead
                # still being taken (its next part starts sooner than a group is written).
                coming = bool(self.waiting) or self.low_water >= 0
                if self.pending and (not coming or self.due_to_flush()):
                    group, self.pending = self.pending, []
                back, self.unstarted = self.unstarted + stale, []
                idle = self.busy == 0 and not self.waiting
                if not group and not back:
                    if idle or (not until_idle and timeout is not None and timeout <= 0):
                        if idle and self.pending:
                            group, self.pending = self.pending, []
                        else:
                            return
                    else:
                        self.cond.wait(self._next_deadline(timeout))
                        timeout = 0 if timeout is not None else None
                        continue
            write(group, back)

    def due_to_flush(self) -> bool:
        return bool(self.pending) and self.monotonic() - self.oldest >= self.flush_after

    def shutdown(self) -> None:
        """Wait for the slots' threads (what runs finishes)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    # -- the slots ---------------------------------------------------------------

    def _slot(self) -> None:
        """A run slot: take the next claimed item at once, until none waits."""
        try:
            while True:
                with self.cond:
                    if not self.waiting:
                        return
                    claimed = self.waiting.popleft()
                    self.last_take = self.monotonic()
                outcome = self.start(claimed)
                with self.cond:
                    if isinstance(outcome, RunOutcome):
                        if not self.pending:
                            self.oldest = self.monotonic()
                        self.pending.append(outcome)
                    else:
                        self.unstarted.append(outcome)
                    left = len(self.waiting)
                    if not left or left == self.low_water or self.due_to_flush():
                        self.cond.notify_all()
        except Exception:  # a bug here must not leave the slot counted busy
            log.exception("a run slot failed")
        finally:
            with self.cond:
                self.busy -= 1
                self.cond.notify_all()

    def _start_slots_locked(self, wanted: int) -> int:
        """Count up to `wanted` more busy slots (no more than are free or items wait); the
        caller submits that many `_slot`s."""
        slots = max(0, min(self.concurrency - self.busy, len(self.waiting), wanted))
        self.busy += slots
        return slots

    def _spread_locked(self) -> int:
        """Slots to add now: every free one when items wait and no slot took one for
        SPREAD_AFTER (the running ones are held by slow items)."""
        if not self.waiting or self.monotonic() - self.last_take < SPREAD_AFTER:
            return 0
        return self._start_slots_locked(len(self.waiting))

    def _stale_locked(self) -> list[QueueItem]:
        """Claimed items still waiting START_BOUND after their claim (all slots busy), and
        guesses while every slot has been held GUESS_WAIT by slow items."""
        stale: list[QueueItem] = []
        mono = self.monotonic()
        held = self.busy >= self.concurrency and mono - self.last_take > GUESS_WAIT
        while self.waiting and (
            mono - self.waiting[0].startable > START_BOUND or (held and self.waiting[0].guess)
        ):
            stale.append(self.waiting.popleft().work.item)
        return stale

    def _next_deadline(self, timeout: float | None) -> float:
        """How long the driver may sleep: until a group is due, a claim goes stale, or
        `timeout`."""
        mono = self.monotonic()
        waits = [START_BOUND if timeout is None else timeout]
        if self.pending:
            waits.append(self.oldest + self.flush_after - mono)
        if self.waiting:
            waits.append(self.waiting[0].startable + START_BOUND - mono)
            if self.busy < self.concurrency:
                waits.append(self.last_take + SPREAD_AFTER - mono)
            elif self.waiting[0].guess:
                waits.append(self.last_take + GUESS_WAIT - mono)
        return max(0.001, min(waits))

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="cronplane-run")
        return self._pool
