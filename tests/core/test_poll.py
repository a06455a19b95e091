"""clock.poll: the one wait loop of `run --wait`, local (RunService) and remote (the HTTP client)."""

from __future__ import annotations

from datetime import UTC, datetime

from cronplane.clock import FakeClock, poll

START = datetime(2026, 1, 1, tzinfo=UTC)


def test_poll_returns_the_first_read_that_is_done_reading_every_interval() -> None:
    clock = FakeClock(START)
    reads: list[float] = []

    def read() -> int:
        reads.append(clock.monotonic() - START.timestamp())
        return len(reads)

    assert poll(read, lambda n: n == 4, clock, every=0.25, timeout=None) == 4
    assert reads == [0.0, 0.25, 0.5, 0.75]


def test_poll_returns_the_last_read_once_the_timeout_has_passed() -> None:
    clock = FakeClock(START)
    reads: list[int] = []

    def read() -> int:
        reads.append(len(reads))
        return reads[-1]

    assert poll(read, lambda _n: False, clock, every=0.25, timeout=1.0) == 4
    assert len(reads) == 5  # at 0, 0.25, 0.5, 0.75 and 1.0 s: the last one after the timeout
