"""Outage backoff: quick retries first, then a short cap so recovery is noticed fast."""

from __future__ import annotations

from cronplane.core.backoff import OUTAGE_CAP, outage_delay


def test_outage_backoff_doubles_then_stays_at_its_cap() -> None:
    delays = [outage_delay(n) for n in range(1, 40)]
    assert delays[:4] == [0.5, 1.0, 2.0, 4.0]
    assert delays == sorted(delays)
    assert max(delays) == OUTAGE_CAP
    # A per-minute schedule must still fire within its minute after the database returns.
    assert OUTAGE_CAP <= 10.0
