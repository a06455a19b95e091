"""Time, injected: the only place that reads the wall clock or sleeps.

- `SystemClock`: the process clock (UTC).
- `FakeClock`: tests set and advance it; `wait` advances instead of sleeping.
- `DatabaseClock` (in `cronplane.store.database`): "now" as the database sees it,
  so several nodes judge lease expiry and due rows by one clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    """Where every component reads the time and waits."""

    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...

    def wait(self, seconds: float, wake: threading.Event | None = None) -> bool:
        """Wait up to `seconds`; return True when `wake` was set before then."""
        ...

    def monotonic(self) -> float:
        """A monotonic reading in seconds, for measuring durations."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, seconds: float, wake: threading.Event | None = None) -> bool:
        seconds = max(0.0, seconds)
        if wake is None:
            time.sleep(seconds)
            return False
        woken = wake.wait(seconds)
        wake.clear()
        return woken

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    """A clock that moves only when told; waiting advances it at once."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, instant: datetime) -> None:
        """Jump to `instant` (aware)."""
        if instant.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        with self._lock:
            self._now = instant.astimezone(UTC)

    def advance(self, seconds: float = 0, **delta: float) -> datetime:
        """Move forward by `seconds` (or timedelta keywords); return the new now."""
        with self._lock:
            self._now += timedelta(seconds=seconds, **delta)
            return self._now

    def wait(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if wake is not None and wake.is_set():
            wake.clear()
            return True
        self.advance(max(0.0, seconds))
        return False

    def monotonic(self) -> float:
        return self.now().timestamp()


def poll(
    read: Callable[[], T],
    done: Callable[[T], bool],
    clock: Clock,
    *,
    every: float,
    timeout: float | None,
) -> T:
    """`read()` every `every` seconds until `done` holds for what it read, or return
    the last read once `timeout` seconds have passed (None: no limit)."""
    started = clock.monotonic()
    while True:
        value = read()
        if done(value) or (timeout is not None and clock.monotonic() - started >= timeout):
            return value
        clock.wait(every)
