"""Which of a worker's items were asked to stop (processes.worker): a flag per item it
holds, read just before the item starts and while it runs.

The flags are set from one read of all the worker's running items asked to stop
(`cancels.asked_of`, an index of its own): made just before a start whenever the last is
older than CHECK_EVERY (one slot asks, the others use its answer), and by the heartbeat's
watch while items run. One read serves a thousand-item claim as it serves one item.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterable
from uuid import UUID

from sqlalchemy.exc import SQLAlchemyError

from cronplane.store import cancels
from cronplane.store.database import Database

log = logging.getLogger(__name__)

# Before invoking a claimed item, the database is asked which of this worker's items
# were asked to stop whenever its last answer is older than this (seconds).
CHECK_EVERY = 0.02


class Flag:
    """One held item's stop flag, set once it was asked to stop. Not a `threading.Event`:
    nothing waits on it (a start and a run read it), and a claim makes a thousand at once
    (an Event, with its Condition and lock, cost ~3.5 µs each)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class StopFlags:
    """One worker's stop flags, by item id."""

    def __init__(self, database: Database, monotonic: Callable[[], float], worker: str) -> None:
        self.database, self.monotonic, self.worker = database, monotonic, worker
        self._flags: dict[UUID, Flag] = {}
        self._checked = -math.inf  # monotonic: when the last read was asked
        self._lock = threading.Lock()

    def hold(self, item_ids: Iterable[UUID]) -> None:
        """Claimed: a flag for each, not set."""
        self._flags.update((item_id, Flag()) for item_id in item_ids)

    def flag(self, item_id: UUID) -> Flag:
        return self._flags.get(item_id) or Flag()

    def drop(self, item_ids: Iterable[UUID]) -> None:
        for item_id in item_ids:
            self._flags.pop(item_id, None)

    def asked(self, item_ids: Iterable[UUID]) -> None:
        """These were asked to stop: set their flags (a run sees it and stops)."""
        for item_id in item_ids:
            flag = self._flags.get(item_id)
            if flag is not None:
                flag.set()

    def fresh(self, claimed: float) -> bool:
        """Make an item's flag at most CHECK_EVERY old, reading the flags when it is older;
        False when the database could not answer (nothing is started on a guess).
        `claimed`: when the item was claimed (monotonic), itself an answer: a claim takes
        only items not asked to stop."""
        if self.monotonic() - max(claimed, self._checked) <= CHECK_EVERY:
            return True
        with self._lock:
            mono = self.monotonic()  # before the read: its answer is at least this fresh
            if mono - self._checked <= CHECK_EVERY:
                return True  # another slot read them meanwhile
            try:
                with self.database.read() as conn:
                    asked = cancels.asked_of(conn, self.worker)
            except SQLAlchemyError as error:
                log.warning("checking for cancel requests failed: %s", error)
                return False
            self._checked = mono
        self.asked(asked)
        return True
