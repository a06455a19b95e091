"""How big a burst's fire transactions are, and what a leader files between bursts.

- `round_limits`: a round's row limit per lane, and whether its rows are shared
  across tenants (store.dispatch.fair) because the round cannot take them all;
- `checkpoint_after_burst` (SQLite): the WAL checkpoint a burst's fire
  transactions deferred;
- `file_between_bursts` (SQLite): file a chunk of the rows fires wrote
  unfiled (store.filing), sized to the room before the next fire.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError

from cronplane.clock import Clock
from cronplane.processes.fire_lanes import lane_plan
from cronplane.store.database import Database
from cronplane.store.dispatch import Fairness, checkpoint, count_due
from cronplane.store.filing import FILING_MIN_CHUNK, chunk_for, file_some

log = logging.getLogger(__name__)

# A burst's first shared round (store.dispatch.fair) is one transaction of at
# most this many rows: it holds every small tenant's rows (their fair share
# is all they have) and commits in a fraction of a full batch's time, so
# their items are queued, and claimed, ahead of the big tenant's bulk.
FAIR_HEAD_ROWS = 1000
# SQLite files a fire's rows (store.filing) a chunk at a time, sized to the
# room before the next fire (filing.chunk_for); with less room than this, none.
FILING_MIN_ROOM = 0.1


def round_limits(
    database: Database,
    now: datetime,
    lanes: int,
    batch_size: int,
    fairness: Callable[[datetime], Fairness] | None,
    *,
    head: bool = False,
) -> tuple[list[int], Fairness | None]:
    """This round's fire transactions' row limits (one per lane) and how they share rows.

    The due rows are counted no further than one past what the round
    takes: when the round takes them all (the common case), the batch is
    the plain range scan in next_run order; when it cannot, the rows are
    shared across tenants (store.dispatch.fair), so one tenant's burst
    does not fill the batch, and the burst's first (`head`) round is one
    small transaction (FAIR_HEAD_ROWS).
    """
    if lanes == 1 and fairness is None:
        return [batch_size], None
    with database.read() as conn:
        due = count_due(conn, now, cap=lanes * batch_size + 1)
    limits = lane_plan(due, lanes=lanes, batch_size=batch_size)
    if lanes == 1:
        limits = [batch_size]
    if fairness is None or due <= sum(limits):
        return limits, None
    if head:
        limits = [min(batch_size, FAIR_HEAD_ROWS)]
    return limits, fairness(now)


def file_between_bursts(
    database: Database, clock: Clock, room: float, sleep: float, rate: float | None
) -> tuple[int, float, float | None]:
    """File a chunk of unfiled rows sized to `room` (seconds before the next fire) at
    `rate` (rows a second, the last chunk's); (rows filed, the sleep left of `sleep`
    after filing, the rate to size the next chunk by). Only where fires file later."""
    if not database.backend.files_later or room < FILING_MIN_ROOM:
        return 0, sleep, rate
    limit = chunk_for(room, rate)
    started = clock.monotonic()
    with database.begin() as conn:
        filed = file_some(conn, limit)
    spent = clock.monotonic() - started
    if filed >= FILING_MIN_CHUNK and spent > 0:
        # The next chunk is sized by how fast this one went: the filing
        # slows as the history grows, and with the machine's load.
        rate = filed / spent
    # After a full chunk more may wait: the next tick files on, or fires
    # what came due. Else the sleep, counted from before, less the filing.
    return filed, 0.0 if filed >= limit else max(0.0, sleep - spent), rate


def checkpoint_after_burst(database: Database) -> None:
    """Once a burst is committed, the SQLite checkpoint its batches deferred."""
    if not database.backend.defers_checkpoint:
        return
    try:
        with database.read() as conn:
            checkpoint(conn)
    except SQLAlchemyError as error:  # housekeeping: the next commit checkpoints anyway
        log.warning("WAL checkpoint after a burst failed: %s", error)
