"""How long before an instant a leader fires the rows due at it (core.lead), from how fast
recent bursts went and how many rows the instant holds (counted once per instant)."""

from __future__ import annotations

from datetime import datetime, timedelta

from cronplane.core.lead import MAX_LEAD, BurstPace, fire_lead, rows_that_fill
from cronplane.store.database import Database
from cronplane.store.dispatch import count_due


class FireLead:
    """A dispatcher's lead: `before(now, earliest)`, learning from `record`ed bursts."""

    def __init__(self, database: Database, fire_ahead: timedelta, max_sleep: float) -> None:
        self.database = database
        self.fire_ahead = fire_ahead
        self.max_sleep = max_sleep
        self._pace = BurstPace()
        self._counted: tuple[datetime, int] | None = None

    def record(self, rows: int, seconds: float) -> None:
        """A burst of `rows` took `seconds`."""
        self._pace.record(rows, seconds)

    def before(self, now: datetime, earliest: datetime | None) -> timedelta:
        """How long before `earliest` its rows are fired (core.lead): the margin
        plus the time they should take, when their instant is close enough for
        the next tick to be the one that fires them; else the margin alone."""
        cap = rows_that_fill(self.fire_ahead.total_seconds(), self._pace.row_seconds)
        if earliest is None or cap is None:
            return self.fire_ahead
        ahead = earliest - now
        if ahead <= self.fire_ahead or ahead.total_seconds() > self.max_sleep + MAX_LEAD:
            # Due within the margin (fired now, however long it takes), or
            # far enough that a later tick will count it.
            return self.fire_ahead
        if self._counted is None or self._counted[0] != earliest:
            with self.database.read() as conn:
                self._counted = (earliest, count_due(conn, earliest, cap=cap))
        seconds = fire_lead(
            self.fire_ahead.total_seconds(), self._counted[1], self._pace.row_seconds
        )
        return timedelta(seconds=seconds)
