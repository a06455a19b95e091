"""The cron contract the rest of cronplane relies on (SPEC §3).

    parse(text, seed=None) -> Cron           raises only ScheduleSyntax (X400003INVSCH)
    Cron.normalized, Cron.describe(), Cron.next_after(dt, tz), Cron.upcoming(dt, n, tz)
    Cron.interval_seconds (an `@every` period, else None), Cron.shortest_gap (seconds)
    Cron.is_once (a one-off `@once …`: at most one occurrence)
    next_fire_times(expr, after, count, tz=None, seed=None) -> list[datetime]
    known_zone(name) -> ZoneInfo             raises UnknownZone (X400004ZONINV)

Every datetime returned is aware UTC. The modules under it: `cron_forms`
(the accepted forms, compiled), `cron_once` (the one-off form), `cron_fields` (one field), `cron_search`
(when), `cron_zones` (zones), `describe` (English); a schedule's next run in
product terms is `occurrences`. The forms and the DST rules are documented
in docs/cron.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import lru_cache

from cronplane.core import cron_search
from cronplane.core.cron_forms import (
    MAX_INTERVAL_SECONDS,
    MAX_LENGTH,
    CronExpr,
    Expression,
    IntervalExpr,
    compile_expression,
)
from cronplane.core.cron_once import OnceExpr
from cronplane.core.cron_zones import known_zone
from cronplane.core.describe import describe as _describe
from cronplane.core.dst import DEBIAN, DstPolicy
from cronplane.errors import ScheduleSyntax

__all__ = [
    "MAX_LENGTH",
    "Cron",
    "ScheduleSyntax",
    "known_zone",
    "next_fire_times",
    "parse",
    "start_instant",
]


def _zone(tz: str | tzinfo | None) -> tzinfo | None:
    if tz is None or isinstance(tz, tzinfo):
        return tz
    return known_zone(tz)


def start_instant(dt: datetime, tz: str | tzinfo | None = None) -> datetime:
    """`dt` as an aware instant: a naive value is a wall time in `tz` (UTC when none).

    One rule for every caller (the API, `cronplane cron next --after`), so a
    start written without an offset means the same thing everywhere.
    """
    if dt.tzinfo is not None and dt.utcoffset() is not None:
        return dt
    return dt.replace(tzinfo=_zone(tz) or UTC)


@dataclass(frozen=True, slots=True)
class Cron:
    """A parsed schedule expression: its normalized text and its occurrences."""

    normalized: str
    expression: Expression = field(repr=False, compare=False)

    @property
    def is_interval(self) -> bool:
        """True for an exact `@every` interval (zone-independent)."""
        return isinstance(self.expression, IntervalExpr)

    @property
    def is_once(self) -> bool:
        """True for a one-off (`@once …`): it fires at most once."""
        return isinstance(self.expression, OnceExpr)

    @property
    def interval_seconds(self) -> int | None:
        """The period in seconds of an exact `@every` interval; None for a 5-field cron."""
        return self.expression.seconds if isinstance(self.expression, IntervalExpr) else None

    @property
    def shortest_gap(self) -> int:
        """The shortest time between two fires, in seconds: an interval's period, or for a
        5-field cron its shortest gap on the wall clock (at least 60; see `CronExpr`)."""
        if isinstance(self.expression, IntervalExpr):
            return self.expression.seconds
        if isinstance(self.expression, OnceExpr):
            return MAX_INTERVAL_SECONDS  # it never fires twice: no minimum is broken
        return self.expression.shortest_gap()

    @property
    def fixed_time(self) -> bool:
        """True when Debian's fixed-time DST rule applies (neither minute nor hour starts with `*`)."""
        return isinstance(self.expression, CronExpr) and self.expression.fixed_time

    def describe(self) -> str:
        """English description, e.g. "At 02:30, every day"; never raises."""
        return _describe(self.expression)

    def next_after(
        self, dt: datetime, tz: str | tzinfo | None = None, dst: DstPolicy = DEBIAN
    ) -> datetime | None:
        """The first occurrence strictly after `dt` (aware), evaluated in zone `tz`.

        Returns aware UTC, or None when nothing fires within the search horizon
        (400 years, the length of the calendar's cycle). A naive `dt` is a
        wall time in `tz` (see `start_instant`); an unknown zone name is
        `UnknownZone`. `dst` is the schedule's DST policy (default: Debian's rules).
        """
        return cron_search.next_after(self.expression, start_instant(dt, tz), _zone(tz), dst)

    def upcoming(
        self,
        dt: datetime,
        count: int,
        tz: str | tzinfo | None = None,
        dst: DstPolicy = DEBIAN,
    ) -> list[datetime]:
        """Up to `count` occurrences strictly after `dt`, increasing, aware UTC."""
        return cron_search.upcoming(self.expression, start_instant(dt, tz), count, _zone(tz), dst)


@lru_cache(maxsize=16_384)
def _parse(text: str, seed: str | None) -> Cron:
    expression = compile_expression(text, seed)
    return Cron(expression.normalized, expression)


def parse(text: str, seed: str | None = None) -> Cron:
    """Parse any SPEC §3 form; `seed` (the schedule's identity) resolves `H`.

    Raises only `ScheduleSyntax`, whose message quotes `text` and names the
    bad field (also in `detail["field"]`). Results are cached: the dispatcher
    re-parses the stored normalized form at every fire.
    """
    if not isinstance(text, str) or not (seed is None or isinstance(seed, str)):
        raise ScheduleSyntax(
            f"invalid schedule {text!r}: expression and seed must be strings",
            {"expression": repr(text), "field": "expression"},
        )
    if len(text) > MAX_LENGTH:
        # Checked before the cache too, so long junk cannot fill it.
        compile_expression(text, seed)
    # The seed only resolves `H`; without one in the text it changes nothing,
    # so it stays out of the cache key and every schedule shares one entry.
    return _parse(text, seed if seed is not None and "H" in text.upper() else None)


def next_fire_times(
    expr: str,
    after: datetime,
    count: int,
    tz: str | tzinfo | None = None,
    seed: str | None = None,
) -> list[datetime]:
    """The next `count` occurrences of `expr` strictly after `after`: aware UTC, increasing."""
    return parse(expr, seed).upcoming(after, count, tz)
