"""Retry policy for failed queue items: pure, so the worker and tests agree.

An item that fails is retried while it has attempts left, after an
exponential delay (``base * factor ** (attempt - 1)``, capped) with jitter so
a burst of failures does not retry in lock-step. The jitter is an argument
(a number in [0, 1)), never drawn here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cronplane.core.items import DEFAULT_MAX_ATTEMPTS, attempts_of

DEFAULT_BASE = 10.0
DEFAULT_CAP = 3600.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts an item gets and how long it waits between them."""

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_seconds: float = DEFAULT_BASE
    factor: float = 2.0
    cap_seconds: float = DEFAULT_CAP
    # Fraction of the delay that jitter may remove (0 = none, 0.5 = up to half).
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.base_seconds < 0 or self.factor < 1 or self.cap_seconds < 0:
            raise ValueError("backoff needs base >= 0, factor >= 1, cap >= 0")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be within [0, 1]")

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> RetryPolicy:
        """A policy from a job's `options` (`max_attempts`, `retry_base`, `retry_cap`)."""
        return cls(
            max_attempts=attempts_of(options),
            base_seconds=float(options.get("retry_base", DEFAULT_BASE)),
            cap_seconds=float(options.get("retry_cap", DEFAULT_CAP)),
        )

    def should_retry(self, attempts: int) -> bool:
        """True when an item that has made `attempts` attempts may try again."""
        return attempts < self.max_attempts

    def delay(self, attempts: int, jitter_draw: float = 0.0) -> float:
        """Seconds to wait after the `attempts`-th failed attempt (1-based)."""
        if attempts < 1:
            raise ValueError("attempts is 1-based")
        if not 0 <= jitter_draw < 1:
            raise ValueError("jitter_draw must be within [0, 1)")
        # Exponent capped so a huge attempt count cannot overflow a float.
        raw = self.base_seconds * self.factor ** min(attempts - 1, 64)
        delay = min(raw, self.cap_seconds)
        return delay * (1 - self.jitter * jitter_draw)


# Loops that lose the database (dispatcher, worker) retry quickly at first and
# then every few seconds: one cheap query per retry, and once the database is
# back the loop notices within OUTAGE_CAP seconds — a per-minute schedule is
# then still fired within its own minute.
OUTAGE_FIRST = 0.5
OUTAGE_CAP = 5.0


def outage_delay(failures: int) -> float:
    """Seconds to wait after the `failures`-th consecutive failed step (>= 1)."""
    exponent = min(max(failures, 1) - 1, 16)
    return min(OUTAGE_CAP, OUTAGE_FIRST * 2.0**exponent)
