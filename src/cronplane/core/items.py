"""What a job's options make of its queue items: priority, expiry, attempts.

Pure, and the one place their defaults are written: the dispatcher's fires
(store.dispatch.planner), run now (runs.py), the queue's inserts
(store.queue.item_values) and the retry policy (core.backoff) all read them
here. Job options are the job's `options` mapping (`priority`,
`expires_after` in seconds, `max_attempts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

DEFAULT_PRIORITY = 0
# Run now jumps the queue of scheduled items.
MANUAL_PRIORITY = 5
DEFAULT_MAX_ATTEMPTS = 3
# A queued item not claimed within this long expires (housekeeping).
DEFAULT_EXPIRY = timedelta(hours=5)


def attempts_of(options: Mapping[str, Any]) -> int:
    """The attempts a job's items get (`max_attempts`, default 3)."""
    return int(options.get("max_attempts", DEFAULT_MAX_ATTEMPTS))


@dataclass(frozen=True, slots=True)
class ItemOptions:
    """A new queue item's priority, time to expiry and attempts."""

    priority: int = DEFAULT_PRIORITY
    expiry: timedelta = DEFAULT_EXPIRY
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @classmethod
    def scheduled(cls, options: Mapping[str, Any]) -> ItemOptions:
        """A fire's item: the job's priority, expiry and attempts, else the defaults."""
        expiry = options.get("expires_after")
        return cls(
            priority=int(options.get("priority", DEFAULT_PRIORITY)),
            expiry=timedelta(seconds=float(expiry)) if expiry else DEFAULT_EXPIRY,
            max_attempts=attempts_of(options),
        )

    @classmethod
    def manual(cls, options: Mapping[str, Any]) -> ItemOptions:
        """A run-now item (SPEC §6): manual priority, the default expiry, the job's attempts."""
        return cls(priority=MANUAL_PRIORITY, max_attempts=attempts_of(options))

    def expires_at(self, now: datetime) -> datetime:
        """When an item enqueued at `now` expires unclaimed."""
        return now + self.expiry
