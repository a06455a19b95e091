"""How a worker takes items (processes.worker): one claim sized for its free slots, or the
next part of a claim read ahead of the instant its items become claimable.

A claim is one transaction (`store.limits.claim`, no double claim). It goes in turns by
tenant at the first claim and then at least every FAIR_CLAIM_EVERY seconds, in the claim
index's order between (the turns' statement costs a claim ~25 % more on SQLite). A claim
read ahead (`claims.peek`) decodes the items before their instant and claims as many as
a claim may take then, ahead of it (`claims.claim_read` as of the instant): at the instant
they only start. The rest are claimed at it in parts that double from 32, each claimed
while the last runs.
Each item comes with its job and schedule name, each kind in one read.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import Connection

from cronplane.clock import Clock
from cronplane.core.model import QueueItem
from cronplane.processes.claimed import ClaimedAhead, ReadAhead
from cronplane.processes.item_runner import ItemRunner, Work
from cronplane.processes.run_slots import START_BOUND
from cronplane.store import claims, limits, tenant_moves
from cronplane.store.database import Database
from cronplane.store.jobs import jobs_by_key
from cronplane.store.schedules import names_of

# A worker claims in turns by tenant at least this often (seconds), so a
# tenant's item in the claim window starts within about this long of
# reaching it, whatever another tenant's backlog; other claims take the
# claim index's order, which costs less.
FAIR_CLAIM_EVERY = 0.25


class Claimer:
    """One worker's claims, under its name and lease."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        worker: str,
        lease: timedelta,
        *,
        claim_batch: int,
        tenant_limit: int | None,
    ) -> None:
        self.database, self.clock, self.worker, self.lease = database, clock, worker, lease
        self.claim_batch = claim_batch
        # Platform limit: running items per tenant (CRONPLANE_TENANT_MAX_CONCURRENCY).
        self.tenant_limit = tenant_limit
        self.ahead: ReadAhead | None = None
        self.held: ClaimedAhead | None = None  # claimed ahead, held until their instant
        self._fair_after = -math.inf  # monotonic: the next claim in turns

    def claim(self, now: datetime, limit: int) -> list[Work]:
        """Claim up to `limit` items claimable at `now`."""
        fair = self._fair_now()
        with self.database.begin() as conn:
            claimed = limits.claim(
                conn,
                self.worker,
                now,
                self.lease,
                limit,
                tenant_limit=self.tenant_limit,
                fair=fair,
            )
            return self._lookups(conn, claimed) if claimed else []

    def read_ahead(self, at: datetime) -> None:
        """Read and decode what a claim at `at` would take (as much as one claim may; each
        part claimed at the instant is sized as a claim is)."""
        if self.ahead is not None and self.ahead.at == at:
            return
        fair = self._fair_now()
        with self.database.read() as conn:
            items = claims.peek(conn, at, self.claim_batch, fair=fair)
            self.ahead = ReadAhead(at, deque(self._lookups(conn, items))) if items else None

    def claim_ahead(self, now: datetime, anchor: float, size: int, sure: int) -> list[Work]:
        """Claim, at `now` (`anchor`: its monotonic reading), up to `size` of what was read
        ahead, those claimable at its instant, each made ready to start (ItemRunner.ready):
        held until the instant (`due`), the first `sure` of them claimed by the pace rule
        and the rest a guess (Pace.ahead_size). The rest stay read ahead, claimed at it in
        parts."""
        ahead = self.ahead
        if ahead is None:
            return []
        taken = self._claim_read(ahead, now, min(size, len(ahead.works)), at=ahead.at)
        works = [Work(w.item, w.job, w.schedule, ItemRunner.ready(w)) for w in taken]
        if works:
            due = anchor + (ahead.at - now).total_seconds()
            self.held = ClaimedAhead(due, works, anchor, sure)
        return works

    def due(self, mono: float) -> ClaimedAhead | None:
        """The items claimed ahead once their instant came (`mono`), no longer held here."""
        held = self.held
        if held is None or mono < held.due:
            return None
        self.held = None
        return held

    def claim_part(self, now: datetime, limit: int) -> list[Work]:
        """Claim the next part of what was read ahead, those of it still claimable (others
        may have taken, cancelled or expired some meanwhile). An instant long past is
        claimed afresh."""
        ahead = self.ahead
        if ahead is None:
            return []
        if (now - ahead.at).total_seconds() > START_BOUND:
            self.ahead = None
            return []
        works = self._claim_read(ahead, now, min(ahead.part, limit, len(ahead.works)))
        ahead.part *= 2
        return works

    def _claim_read(
        self, ahead: ReadAhead, now: datetime, size: int, at: datetime | None = None
    ) -> list[Work]:
        """Claim the next `size` items read ahead (those claimable at `at`, default now)."""
        part = [ahead.works.popleft() for _ in range(size)]
        if not ahead.works:
            self.ahead = None
        works = {w.item.id: w for w in part}
        with self.database.begin() as conn:
            items = (w.item for w in part)
            taken = claims.claim_read(conn, self.worker, now, self.lease, items, at=at)
        return [Work(item, works[item.id].job, works[item.id].schedule) for item in taken]

    def _fair_now(self) -> bool:
        """Whether this claim goes in turns by tenant (then not again for FAIR_CLAIM_EVERY)."""
        mono = self.clock.monotonic()
        if mono < self._fair_after:
            return False
        self._fair_after = mono + FAIR_CLAIM_EVERY
        return True

    def _lookups(self, conn: Connection, claimed: Sequence[QueueItem]) -> list[Work]:
        """Each item's job and schedule name, each kind in one read (and, for an item its
        tenant left queued here when it moved to another shard, as they left)."""
        jobs = jobs_by_key(conn, ((i.tenant, i.stack, i.job) for i in claimed))
        names = names_of(conn, {i.schedule_id for i in claimed if i.schedule_id is not None})
        missing = {
            i.tenant
            for i in claimed
            if (i.tenant, i.stack, i.job) not in jobs
            or (i.schedule_id is not None and i.schedule_id not in names)
        }
        if missing:  # rare: only a moved tenant's items draining here miss their rows
            gone_jobs, gone_names = tenant_moves.left_behind(conn, missing)
            jobs = gone_jobs | jobs
            names = gone_names | names
        return [
            Work(
                item,
                jobs.get((item.tenant, item.stack, item.job)),
                names.get(item.schedule_id) if item.schedule_id else None,
            )
            for item in claimed
        ]
