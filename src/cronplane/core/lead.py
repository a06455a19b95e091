"""How long before an instant its rows are fired: the margin plus the burst's own time.

A node's dispatcher fires the rows due at an instant ahead of it, as of it
(docs/cron.md, "Firing ahead"), so their items are committed before the
instant. A fixed lead only covers bursts shorter than it: 10,000 rows due
at once take 0.3-0.6 s on PostgreSQL on a 2-core machine, so with a quarter
second they committed a quarter second late. The lead is therefore the
configured margin (`fire_ahead`) plus the time the burst is expected to take
(its due rows at the pace the last bursts went), and never more than
MAX_LEAD: how early a decision may be taken stays bounded, below the
shortest interval a schedule may have (1 s).

Pure: the dispatcher measures and counts; this only computes.
"""

from __future__ import annotations

from collections import deque

# The most a lead may be in all, however large the burst: a decision taken
# this early still leaves a schedule every second a quarter second between
# its previous occurrence becoming claimable and the next one's decision.
MAX_LEAD = 0.75
# Seconds per fired row before a burst has been timed (20,000 fires/s: a
# 10,000 burst on PostgreSQL on a quiet 2-core machine).
ASSUMED_ROW_SECONDS = 1 / 20_000
# A burst is timed only with at least this many rows: below it the
# transaction's fixed cost (fence, lookups, commit) would pass for a per-row one.
PACE_MIN_ROWS = 200
# The pace is the slowest of the last few timed bursts: one quick burst on a
# loaded machine does not shrink the lead for the next.
PACE_WINDOW = 3


def fire_lead(fire_ahead: float, due_rows: int, row_seconds: float) -> float:
    """Seconds before an instant to fire its `due_rows` rows.

    0 when firing ahead is off; else the margin plus the expected burst time,
    at least `fire_ahead` and at most MAX_LEAD (or `fire_ahead` itself, when
    that is configured above MAX_LEAD).
    """
    if fire_ahead <= 0:
        return 0.0
    expected = max(0, due_rows) * max(0.0, row_seconds)
    return min(max(fire_ahead, MAX_LEAD), fire_ahead + expected)


def rows_that_fill(fire_ahead: float, row_seconds: float) -> int | None:
    """How many due rows make the lead MAX_LEAD: counting past them changes nothing.

    None when no count is needed (firing ahead off, no room above the margin,
    or bursts that take no measurable time)."""
    room = MAX_LEAD - fire_ahead
    if fire_ahead <= 0 or room <= 0 or row_seconds <= 0:
        return None
    return int(room / row_seconds) + 1


class BurstPace:
    """Seconds per fired row, learnt from the bursts a dispatcher timed."""

    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=PACE_WINDOW)

    @property
    def row_seconds(self) -> float:
        """The slowest recent pace, or the assumed one before any burst was timed."""
        return max(self._recent) if self._recent else ASSUMED_ROW_SECONDS

    def record(self, rows: int, seconds: float) -> None:
        """A burst of `rows` rows took `seconds` (too small a burst teaches nothing)."""
        if rows >= PACE_MIN_ROWS and seconds >= 0:
            self._recent.append(seconds / rows)
