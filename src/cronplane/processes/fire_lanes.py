"""A round's fire transactions, run at once: the dispatcher's lanes.

On PostgreSQL a round of a large burst is several fire transactions at once
(`lanes`, default 2), each on its own connection over disjoint due rows (FOR
UPDATE SKIP LOCKED): the server runs each on its own process, so a burst
uses more than one core, and a fire transaction's time is mostly the
server's (index maintenance), not ours. The lanes share the fence (a shared
lock on the lease row), so a takeover still waits for all of them. SQLite
has one writer: there a round is always one transaction.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta

from cronplane.clock import Clock
from cronplane.core.firing import OccurrenceLoader
from cronplane.core.quotas import Quota
from cronplane.service.backfills import enqueue_passed
from cronplane.store import lease
from cronplane.store.database import Database
from cronplane.store.dispatch import BatchResult, Fairness, Fencing, crash_point, fire_batch

# Parallel fire transactions on PostgreSQL. Two measured 1.7x the fires/s of
# one on a 2-core machine (10,000 due: 1.15 s -> 0.67 s).
DEFAULT_PG_LANES = 2
# A lane's least share of a round: below it, a second transaction's fixed
# cost (fence, lookups, commit) outweighs the overlap.
LANE_MIN_ROWS = 500

# What a lane ends with: its result and when it committed, or its error.
LaneOutcome = tuple[BatchResult, datetime] | Exception


def lane_plan(due: int, *, lanes: int, batch_size: int) -> list[int]:
    """The row limits of one round's fire transactions for `due` rows due now.

    Rows are split evenly over as many lanes as have at least LANE_MIN_ROWS
    (or a whole batch, when batches are smaller) each; one lane takes a
    whole batch, as a dispatcher without lanes does.
    """
    if due <= 0:
        return []
    least = min(batch_size, LANE_MIN_ROWS)
    share = min(batch_size, max(-(-due // lanes), least))
    count = min(lanes, -(-due // share))
    return [batch_size] if count == 1 else [share] * count


class FireLanes:
    """Fire transactions on up to `count` connections at once (the first on the caller's
    thread): `lanes`, or DEFAULT_PG_LANES, on PostgreSQL; one on SQLite."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        lanes: int | None,
        ttl: timedelta,
        occurrences: OccurrenceLoader,
        quotas: Quota,
    ) -> None:
        self.database = database
        self.clock = clock
        # SQLite serializes writers: parallel fire transactions would only queue.
        if not database.backend.parallel_fires:
            self.count = 1
        else:
            self.count = DEFAULT_PG_LANES if lanes is None else lanes
        self.ttl = ttl
        self.occurrences = occurrences
        self.quotas = quotas
        self._pool: ThreadPoolExecutor | None = None

    def run(
        self, fencing: Fencing, now: datetime, limits: list[int], fairness: Fairness | None
    ) -> list[LaneOutcome]:
        """One fire transaction per limit, all at once; each one's outcome, in order."""
        futures: list[Future[tuple[BatchResult, datetime]]] = []
        if len(limits) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.count - 1, thread_name_prefix="cronplane-lane"
                )
            futures = [
                self._pool.submit(self.fire_one, fencing, now, n, fairness) for n in limits[1:]
            ]
        outcomes: list[LaneOutcome] = []
        for n, limit in enumerate(limits):
            try:
                outcomes.append(
                    self.fire_one(fencing, now, limit, fairness)
                    if n == 0
                    else futures[n - 1].result()
                )
            except Exception as error:  # reported after every lane has ended
                outcomes.append(error)
        return outcomes

    def fire_one(
        self, fencing: Fencing, now: datetime, limit: int, fairness: Fairness | None
    ) -> tuple[BatchResult, datetime]:
        """One fire transaction; its result and when it committed (by the clock, not `now`,
        which is ahead of it when firing ahead)."""
        started_at, started = self.clock.now(), self.clock.monotonic()
        with self.database.begin() as conn:
            lease.guard(conn, self.ttl, firing=fencing.lease_name)
            result = fire_batch(
                conn,
                fencing=fencing,
                now=now,
                limit=limit,
                occurrences=self.occurrences,
                quotas=self.quotas,
                fairness=fairness,
            )
            if result.ended_pauses:
                # What those pauses passed, as their policy names: in the fire's own
                # transaction, so the pause ends and its backfill commits together.
                enqueue_passed(conn, now, result.ended_pauses, self.quotas)
        crash_point("after_commit")
        return result, started_at + timedelta(seconds=self.clock.monotonic() - started)

    def close(self) -> None:
        """Stop the lanes' threads (the next round with several lanes starts them again)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
