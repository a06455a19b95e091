"""The dispatcher: hold the lease, fire due schedules, sleep until the next one.

:meth:`Dispatcher.tick` is one step; :meth:`Dispatcher.run` repeats it. A tick:

1. acquires or renews the lease when it is time (a third of the TTL), in its
   own transaction; a takeover starts a new term and records `LEADER_ACQUIRED`;
2. as a follower, returns how long to sleep (until the lease could expire);
3. as the leader, reads the earliest next_run (one index lookup); when a row
   is due, runs rounds of fire transactions (:func:`store.dispatch.fire_batch`,
   sized by `fire_rounds.round_limits`: shared across tenants when a round
   cannot take every due row) until none is left, renewing the lease between
   rounds; a fenced transaction commits nothing and we become a follower; on
   SQLite, a PASSIVE WAL checkpoint once the burst is committed;
4. on SQLite, files a chunk of the rows fires wrote unfiled, sized to the room
   before the next fire (`fire_rounds.file_between_bursts`), so their index
   pages are written between bursts and never delay one;
5. returns how long to sleep: until the earliest next_run (less the lead),
   capped by `max_sleep` and by the next renewal.

**Firing ahead.** With `fire_ahead` (a node's default: 0.25 s), the rows due
at the earliest next_run are decided, queued (claimable from the instant) and
recorded exactly as at it, committed before it, so a burst's commit time is
not its lateness (docs/cron.md); how far ahead is `fire_lead.FireLead`'s.

**Lanes.** On PostgreSQL a round of a large burst is several fire
transactions at once (`fire_lanes`); a new term with nothing due yet readies
them (connections, statements, the occurrence functions loaded once).

`run` sleeps through the clock, woken early by :meth:`wake` (the service's
`on_change` hook) and, on PostgreSQL, by LISTEN/NOTIFY. A database error is
logged and retried with a capped exponential backoff; nothing is lost, since
the missed occurrences coalesce into one fire when the database is back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core.backoff import OUTAGE_CAP, outage_delay
from cronplane.core.firing import OccurrenceLoader, Outcome
from cronplane.core.occurrences import next_run_function
from cronplane.core.quotas import Quota
from cronplane.processes.dispatch_reports import (
    BatchReport,
    TickReport,
    default_holder,
    equal_shares,
)
from cronplane.processes.fire_lanes import FireLanes
from cronplane.processes.fire_lead import FireLead
from cronplane.processes.fire_rounds import (
    checkpoint_after_burst,
    file_between_bursts,
    round_limits,
)
from cronplane.processes.leadership import Seat, lease_step
from cronplane.settings import quota_defaults
from cronplane.store import lease
from cronplane.store.database import Database
from cronplane.store.dispatch import (
    Fairness,
    Fencing,
    earliest_next_run,
)

log = logging.getLogger(__name__)

DEFAULT_GROUP = "dispatcher"
DEFAULT_TTL = 10.0
# Fires per transaction. Each batch pays a fence, three lookups and a commit;
# 5,000 instead of 2,000 made a burst of 10,000 about 10 % faster on both
# databases. A batch holds SQLite's write lock for about a quarter second.
DEFAULT_BATCH = 5000
DEFAULT_MAX_SLEEP = 1.0
# Firing ahead: a node's dispatcher commits an instant's rows at least this
# long before it, as of the instant (`Dispatcher.fire_ahead`; a burst starts
# earlier by the time it should take, core.lead), so a burst's commit time is
# not its lateness. Below the shortest interval a schedule may have (1 s).
DEFAULT_FIRE_AHEAD = 0.25


class Dispatcher:
    """One dispatcher node; only the lease holder of its group fires."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        group: str = DEFAULT_GROUP,
        holder: str | None = None,
        ttl: float = DEFAULT_TTL,
        batch_size: int = DEFAULT_BATCH,
        max_sleep: float = DEFAULT_MAX_SLEEP,
        lanes: int | None = None,
        occurrences: OccurrenceLoader = next_run_function,
        on_tick: Callable[[TickReport], None] | None = None,
        quotas: Quota | None = None,
        fairness: Callable[[datetime], Fairness] | None = equal_shares,
        fire_ahead: float = 0.0,
        seat: Seat | None = None,
    ) -> None:
        if not 0 <= fire_ahead < 1:
            raise ValueError("fire_ahead must be at least 0 and below 1 second")
        if ttl <= 0 or batch_size < 1 or max_sleep <= 0 or (lanes is not None and lanes < 1):
            raise ValueError("ttl, batch_size, lanes and max_sleep must be positive")
        self.database = database
        self.clock = clock
        self.group = group
        self.holder = holder or default_holder()
        self.ttl = timedelta(seconds=ttl)
        self.batch_size = batch_size
        self.max_sleep = max_sleep
        # Rows due within this of now are fired as of their instant (see tick).
        self.fire_ahead = timedelta(seconds=fire_ahead)
        # The term whose lanes are ready (connections open, statements prepared).
        self._ready_term: int | None = None
        # How long before an instant its rows are fired (core.lead).
        self._leads = FireLead(database, self.fire_ahead, max_sleep)
        # Rows filed per second by the last chunk (store.filing); None until one is timed.
        self._filing_rate: float | None = None
        # The fire transactions, with what each decides by: the occurrence
        # functions and the platform's default tenant quota (CRONPLANE_QUOTA_*
        # unless given).
        self._lanes = FireLanes(
            database,
            clock,
            lanes=lanes,
            ttl=self.ttl,
            occurrences=occurrences,
            quotas=quota_defaults() if quotas is None else quotas,
        )
        # How a round that cannot take every due row shares it across tenants
        # (store.dispatch.fair), asked once per such round; None: next_run order.
        self.fairness = fairness
        # Called by `run` with every report (metrics); never by `tick` itself.
        self.on_tick = on_tick
        self.term: int | None = None
        # Sharing shards with other nodes: whether to take or give back the lease.
        self.seat = seat
        # Monotonic reading at the start of our last successful acquire/renew.
        self._renewed_mono: float | None = None
        self._failures = 0
        self._wake = threading.Event()
        self._stop = threading.Event()

    # -- leadership -----------------------------------------------------------

    @property
    def lanes(self) -> int:
        """Fire transactions a round may run at once (always 1 on SQLite)."""
        return self._lanes.count

    @property
    def is_leader(self) -> bool:
        """True while we believe we hold the lease (every fire re-checks it)."""
        return self.term is not None

    def _renew_due(self) -> bool:
        if self.term is None or self._renewed_mono is None:
            return True
        return self.clock.monotonic() - self._renewed_mono >= self.ttl.total_seconds() / 3

    def _lease_step(self) -> float | None:
        """Acquire or renew; return the follower's sleep, or None when we lead."""
        started = self.clock.monotonic()
        with self.database.begin() as conn:
            lease.guard(conn, self.ttl)
            step = lease_step(
                conn,
                group=self.group,
                holder=self.holder,
                known_term=self.term,
                now=self.clock.now(),
                ttl=self.ttl,
                seat=self.seat,
            )
        term = step.term
        if term is not None and term != self.term:
            log.info("dispatcher %s leads %r with term %d", self.holder, self.group, term)
        elif term is None and self.term is not None:
            log.warning("dispatcher %s lost the lease (term %d)", self.holder, self.term)
        self.term = term
        if term is None:
            return step.follower_sleep
        self._renewed_mono = started
        return None

    # -- the step -------------------------------------------------------------

    def tick(self) -> TickReport:
        """One step: lease, then fire every due row in batches; never raises on DB errors."""
        counts = dict.fromkeys(Outcome, 0)
        batches: list[BatchReport] = []
        try:
            if self._renew_due():
                follower_sleep = self._lease_step()
                if follower_sleep is not None:
                    self._failures = 0
                    return TickReport(False, None, follower_sleep, counts)
            # A read first: when nothing is due (most ticks) no write
            # transaction, and so no lock or commit, is needed at all.
            now, earliest = self._earliest()
            lead = self._leads.before(now, earliest)
            if earliest is not None and earliest <= now + lead:
                started = self.clock.monotonic()
                try:
                    fenced = self._fire_all(counts, batches, not_before=earliest)
                finally:
                    if batches:
                        checkpoint_after_burst(self.database)
                if fenced:
                    self._failures = 0
                    return TickReport(False, None, 0.0, counts, tuple(batches), fenced=True)
                self._leads.record(
                    sum(b.selected for b in batches), self.clock.monotonic() - started
                )
                now, earliest = self._earliest()
                lead = self._leads.before(now, earliest)
            elif self.lanes > 1 and self._ready_term != self.term:
                self._ready_lanes(now)
            sleep = self._leader_sleep(now, earliest, lead)
            room = self.max_sleep if earliest is None else (earliest - lead - now).total_seconds()
            filed, sleep, self._filing_rate = file_between_bursts(
                self.database, self.clock, room, sleep, self._filing_rate
            )
        except (DBAPIError, SQLAlchemyError, OSError) as error:
            self._failures += 1
            delay = outage_delay(self._failures)
            log.warning("dispatcher tick failed (%s); retrying in %.1fs", error, delay)
            return TickReport(
                self.is_leader, self.term, delay, counts, tuple(batches), error=str(error)
            )
        self._failures = 0
        if batches:
            summary = ", ".join(f"{o.value}={n}" for o, n in counts.items() if n)
            log.info("term %d: %s", self.term, summary)
        return TickReport(True, self.term, sleep, counts, tuple(batches), filed=filed)

    def _fire_all(
        self, counts: dict[Outcome, int], batches: list[BatchReport], *, not_before: datetime
    ) -> bool:
        """Run rounds of fire transactions until no due row is left; True when fenced.

        Each round decides as of now, or as of `not_before` (the earliest
        next_run) while that is still ahead: firing ahead, the rows due at
        that instant are selected, decided, queued (claimable from the
        instant) and recorded exactly as at the instant, only committed
        before it. Rows due later are not selected.
        """
        head = True
        while True:
            if self._renew_due() and self._lease_step() is not None:
                return True
            assert self.term is not None
            fencing = Fencing(self.group, self.holder, self.term)
            now = max(self.clock.now(), not_before)
            limits, fairness = round_limits(
                self.database, now, self.lanes, self.batch_size, self.fairness, head=head
            )
            head = False
            full, fenced = False, False
            failure: Exception | None = None
            outcomes = self._lanes.run(fencing, now, limits, fairness)
            for limit, outcome in zip(limits, outcomes, strict=True):
                if isinstance(outcome, lease.Fenced):
                    log.warning("dispatcher %s fenced: %s", self.holder, outcome)
                    fenced = True
                elif isinstance(outcome, Exception):
                    failure = failure or outcome
                else:
                    # A lane that committed is reported even when a sibling failed.
                    result, committed = outcome
                    for kind, count in result.counts.items():
                        counts[kind] += count
                    if result.selected:
                        batches.append(
                            BatchReport(
                                result.selected,
                                result.counts[Outcome.FIRE],
                                tuple(result.fired_for),
                                committed,
                                result.coalesced,
                                result.by_tenant,
                                decided_at=now,
                            )
                        )
                    full = full or result.selected >= limit
            if fenced:
                self.term = None
                return True
            if failure is not None:
                raise failure
            if not full:
                return False

    def _ready_lanes(self, now: datetime) -> None:
        """A new term with nothing due yet: an empty fire transaction on every lane.

        It opens the lanes' connections and prepares their statements (the
        fence, the due select), and loads the occurrence machinery once (the
        zone list is read from disk on first use: tens of milliseconds under
        the GIL, which stalled every lane of a process's first burst), so the
        term's first burst does not pay for them inside its fire transactions.
        Nothing is selected or written; a failure here is left to the first
        real fire to meet.
        """
        assert self.term is not None
        self._ready_term = self.term
        try:
            self._lanes.occurrences("* * * * *", "UTC")(now)
        except Exception as error:  # only a warm-up: the fire path reports its own
            log.debug("loading the occurrence functions failed: %s", error)
        fencing = Fencing(self.group, self.holder, self.term)
        for outcome in self._lanes.run(fencing, now, [0] * self.lanes, None):
            if isinstance(outcome, Exception):
                log.debug("readying the fire lanes failed: %s", outcome)

    def _earliest(self) -> tuple[datetime, datetime | None]:
        """(now, the earliest next_run of an enabled schedule)."""
        now = self.clock.now()
        with self.database.read() as conn:
            return now, earliest_next_run(conn)

    def _leader_sleep(self, now: datetime, earliest: datetime | None, lead: timedelta) -> float:
        sleep = self.max_sleep
        if earliest is not None:
            sleep = min(sleep, max(0.0, (earliest - lead - now).total_seconds()))
        if self._renewed_mono is not None:
            renew_in = self.ttl.total_seconds() / 3 - (self.clock.monotonic() - self._renewed_mono)
            sleep = min(sleep, max(0.0, renew_in))
        return sleep

    # -- the loop -------------------------------------------------------------

    def wake(self) -> None:
        """Cut the current sleep short (a schedule changed); safe from any thread."""
        self._wake.set()

    def stop(self) -> None:
        """Ask `run` to return after the current tick."""
        self._stop.set()
        self._wake.set()

    def run(self, *, listen: bool = True) -> None:
        """Tick until `stop()`; on PostgreSQL also wake on NOTIFY; release the lease at the end."""
        listener = None
        if listen:
            listener = self.database.backend.listener(self.database, self.clock, self.wake)
        try:
            while not self._stop.is_set():
                try:
                    report = self.tick()
                    if self.on_tick is not None:
                        self.on_tick(report)
                    sleep = report.sleep
                except Exception:  # a bug must not silently stop all firing
                    log.exception("dispatcher tick crashed; retrying in %.0fs", OUTAGE_CAP)
                    self.term = None  # re-check the lease before any further fire
                    sleep = OUTAGE_CAP
                if self._stop.is_set():
                    break
                self.clock.wait(sleep, self._wake)
        finally:
            if listener is not None:
                listener.stop()
            self.release()
            self.close()

    def close(self) -> None:
        """Stop the lanes' threads (a later tick starts them again)."""
        self._lanes.close()

    def release(self) -> None:
        """Give the lease up so a follower takes over without waiting for expiry."""
        if self.term is None:
            return
        try:
            with self.database.begin() as conn:
                lease.release(conn, self.group, self.holder, self.term, self.clock.now())
        except SQLAlchemyError as error:
            log.warning("could not release the lease: %s", error)
        self.term = None
