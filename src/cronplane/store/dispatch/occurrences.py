"""A batch's occurrence functions, memoized (the planner's `next_after`)."""

from __future__ import annotations

from datetime import datetime

from cronplane.core.dst import DstPolicy
from cronplane.core.excluded import Exclusion
from cronplane.core.firing import NextAfter, OccurrenceLoader

Key = tuple[str, str, DstPolicy, Exclusion | None]


class Occurrences:
    """Occurrence functions for one batch, memoized on (cron, zone, DST policy, excluded
    days, instant).

    Rows due at one instant often share an expression (`*/15 * * * *`), so a
    batch computes each distinct next occurrence once. A cron or zone that
    fails to load fails each of its rows' calls (the row is then disabled).
    """

    def __init__(self, occurrences: OccurrenceLoader) -> None:
        self._occurrences = occurrences
        self._functions: dict[Key, NextAfter] = {}
        self._memo: dict[tuple[Key, datetime], datetime | None] = {}

    def of(
        self, cron: str, timezone: str, dst: DstPolicy, exclusion: Exclusion | None = None
    ) -> NextAfter:
        """The instants that run: a row that moves its excluded days' occurrences
        (previous/next) runs the shifted ones; `raw` is what the expression gives."""
        key = (cron, timezone, dst, exclusion)
        function = self._functions.get(key)
        if function is None:
            function = self._functions[key] = self._load(key)
        memo = self._memo

        def next_after(after: datetime) -> datetime | None:
            memo_key = (key, after)
            if memo_key not in memo:
                memo[memo_key] = function(after)
            return memo[memo_key]

        return next_after

    def raw(self, cron: str, timezone: str, dst: DstPolicy) -> NextAfter:
        """The expression's own occurrences (before any excluded day moves them)."""
        return self.of(cron, timezone, dst)

    def _load(self, key: Key) -> NextAfter:
        cron, timezone, dst, exclusion = key
        try:
            if exclusion is not None and exclusion.policy != "skip":
                return exclusion.shifted(self.raw(cron, timezone, dst))
            return self._occurrences(cron, timezone, dst)
        except Exception as error:  # a bad stored row must not stop the loop (SPEC §6)
            message = f"{type(error).__name__}: {error}"

            def failing(_after: datetime) -> datetime | None:
                raise ValueError(message)

            return failing
