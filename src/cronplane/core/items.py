"""What a job's options make of its queue items: priority, expiry, attempts.

Pure, and the one place their defaults are written: the dispatcher's fires
(store.dispatch.planner), run now (runs.py), the queue's inserts
(store.queue.item_values) and the retry policy (core.backoff) all read them
here. Job options are the job's `options` mapping (`priority`,
`expires_after` in seconds, `max_attempts`, `timeout` in seconds,
`max_concurrency`). A schedule's own `timeout` overrides the job's; the
effective value travels with the item, so a worker needs no lookup to stop it.
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
# Seconds between reads of an item a caller waits for (`run --wait`, local or remote).
WAIT_POLL = 0.25


def attempts_of(options: Mapping[str, Any]) -> int:
    """The attempts a job's items get (`max_attempts`, default 3)."""
    return int(options.get("max_attempts", DEFAULT_MAX_ATTEMPTS))


def _optional_int(options: Mapping[str, Any], key: str) -> int | None:
    value = options.get(key)
    return None if value is None else int(value)


def timeout_of(options: Mapping[str, Any], schedule_timeout: int | None = None) -> float | None:
    """An item's run timeout in seconds: the schedule's `timeout`, else the job's (a number:
    a webhook job may say 0.5), else None (no limit)."""
    if schedule_timeout is not None:
        return float(schedule_timeout)
    value = options.get("timeout")
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class ItemOptions:
    """A new queue item's priority, time to expiry and attempts."""

    priority: int = DEFAULT_PRIORITY
    expiry: timedelta = DEFAULT_EXPIRY
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    # The job's `timeout` (seconds); a schedule's own `timeout` replaces it (timeout_of).
    timeout: float | None = None
    max_concurrency: int | None = None

    @classmethod
    def scheduled(
        cls, options: Mapping[str, Any], schedule_timeout: int | None = None
    ) -> ItemOptions:
        """A fire's (or a backfill's) item: the job's priority, expiry, attempts and run
        controls, else the defaults; a schedule's own timeout replaces the job's."""
        expiry = options.get("expires_after")
        return cls(
            priority=int(options.get("priority", DEFAULT_PRIORITY)),
            expiry=timedelta(seconds=float(expiry)) if expiry else DEFAULT_EXPIRY,
            max_attempts=attempts_of(options),
            timeout=timeout_of(options, schedule_timeout),
            max_concurrency=_optional_int(options, "max_concurrency"),
        )

    @classmethod
    def manual(cls, options: Mapping[str, Any], schedule_timeout: int | None = None) -> ItemOptions:
        """A run-now item (SPEC §6): manual priority, the default expiry, the job's attempts."""
        return cls(
            priority=MANUAL_PRIORITY,
            max_attempts=attempts_of(options),
            timeout=timeout_of(options, schedule_timeout),
            max_concurrency=_optional_int(options, "max_concurrency"),
        )

    def expires_at(self, now: datetime) -> datetime:
        """When an item enqueued at `now` expires unclaimed."""
        return now + self.expiry
