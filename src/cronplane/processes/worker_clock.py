"""A worker's clock (processes.worker): "now" read at its last claim, carried forward by the
monotonic clock. On PostgreSQL `clock.now()` may be a round trip (store.database's
DatabaseClock), ten times a short item's cost, and a start reads the time twice."""

from __future__ import annotations

from datetime import datetime, timedelta

from cronplane.clock import Clock


class WorkerClock:
    """`clock.now()` once per claim (`anchor`), the monotonic clock between."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._anchor: tuple[datetime, float] | None = None

    def anchor(self, now: datetime, mono: float) -> None:
        """`now` and the monotonic reading taken with it (before a claim: paired with a
        reading after it, the worker's clock ran behind by the claim's duration)."""
        self._anchor = (now, mono)

    def now(self) -> datetime:
        if self._anchor is None:
            return self.clock.now()
        at, mono = self._anchor
        return at + timedelta(seconds=self.clock.monotonic() - mono)
