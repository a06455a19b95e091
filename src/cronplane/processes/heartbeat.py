"""A worker's one heartbeat thread: it keeps the leases of every item the worker holds.

Claimed items stay `running` under a lease until their outcome is recorded;
a worker that stops renewing (it died) lets them lapse, and the housekeeping
sweep requeues them. One thread per worker renews them all in one UPDATE
every third of the lease, and only while it holds claims (an idle worker
runs no timer). An item found no longer ours is dropped: its outcome write,
conditional on the lease, will record nothing.

Between beats, every `watch` seconds (default 1) while it holds claims, the
same thread asks which of them were asked to stop (`cancel_requested_at`, a
primary-key lookup) and tells the worker (`on_cancel`), which stops those
runs; an idle worker asks nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from datetime import timedelta
from uuid import UUID

from sqlalchemy.exc import SQLAlchemyError

from cronplane.clock import Clock
from cronplane.store import cancels, queue
from cronplane.store.database import Database

log = logging.getLogger(__name__)

DEFAULT_WATCH = 1.0  # seconds between looks for cancel requests while items are held


class Heartbeat:
    """Every third of the lease, extend the lease of every item held (a daemon thread)."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        worker: str,
        lease: timedelta,
        *,
        on_cancel: Callable[[set[UUID]], None] | None = None,
        watch: float = DEFAULT_WATCH,
    ) -> None:
        self.database, self.clock, self.worker, self.lease = database, clock, worker, lease
        self.on_cancel = on_cancel
        self.watch = watch
        self._held: set[UUID] = set()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._busy = threading.Event()  # set while claims are held
        self._thread = threading.Thread(target=self._beat, name="cronplane-heartbeat", daemon=True)
        self._thread.start()

    def hold(self, item_ids: Iterable[UUID]) -> None:
        with self._lock:
            self._held.update(item_ids)
            if not self._busy.is_set():  # held one by one, at each start: set once
                self._busy.set()

    def drop(self, item_ids: Iterable[UUID]) -> None:
        with self._lock:
            self._held.difference_update(item_ids)
            if not self._held:
                self._busy.clear()

    def stop(self) -> None:
        self._done.set()
        self._busy.set()

    def join(self) -> None:
        self._thread.join(timeout=30)

    def _beat(self) -> None:
        interval = self.lease.total_seconds() / 3
        step = min(interval, self.watch) if self.on_cancel is not None else interval
        since_beat = 0.0
        while not self._done.is_set():
            self._busy.wait()  # an idle worker has no lease to renew: no timer runs
            if self.clock.wait(step, self._done) or self._done.is_set():
                return
            since_beat += step
            with self._lock:
                held = sorted(self._held)
            if self.on_cancel is not None and held:
                self._look_for_cancels()
            if since_beat < interval:
                continue
            since_beat = 0.0
            try:
                with self.database.begin() as conn:
                    ours = queue.heartbeat_many(
                        conn, held, self.worker, self.clock.now(), self.lease
                    )
            except SQLAlchemyError as error:
                log.warning("heartbeat for %d item(s) failed: %s", len(held), error)
                continue
            lost = set(held) - ours
            if lost:
                log.warning(
                    "%d item(s) are no longer ours; their outcomes will not be recorded", len(lost)
                )
                self.drop(lost)

    def _look_for_cancels(self) -> None:
        assert self.on_cancel is not None
        try:
            with self.database.read() as conn:
                asked = cancels.asked_of(conn, self.worker)
        except SQLAlchemyError as error:
            log.warning("looking for cancel requests failed: %s", error)
            return
        if asked:
            self.on_cancel(asked)
