"""Operational controls (docs/controls.md): the pure rules of jitter, pause and backfill.

- jitter: `check_jitter` (against the cron's shortest interval; the field's own
  range is its row in `core.fields`) and `jitter_offset` (the stable offset of a row);
- pause: `parse_instant` (an ISO 8601 instant, naive = the row's zone),
  `check_until` (strictly in the future), `check_note`;
- backfill: `backfill_range` (the range checked) and `backfill_occurrences`
  (the nominal occurrences in [from, to), capped);
- what a pause passed: `check_missed`, `check_pause_missed` (a pause's policy needs
  its until) and `missed_range` (the occurrences a resume, or the pause's own end,
  enqueues).

Pure: every instant is an argument.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Final, Literal
from uuid import UUID
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronplane.core import cron as cron_engine
from cronplane.core.validation import one_of
from cronplane.errors import (
    BackfillTooLarge,
    InvalidBackfill,
    InvalidRequest,
    InvalidUntil,
    JitterTooLong,
)

MAX_NOTE_LENGTH: Final = 500
# Items one backfill request may enqueue (BackfillTooLarge past it).
MAX_BACKFILL: Final = 1_000


# -- jitter ----------------------------------------------------------------------


def check_jitter(cron: str, jitter: int | None) -> None:
    """JitterTooLong when `jitter` is not shorter than the cron's shortest gap.

    A jitter as long as the gap could move one occurrence's fire past the next
    one's; the gap is measured as `X400010INTMIN` measures it (`Cron.shortest_gap`).
    """
    if not jitter:
        return
    gap = cron_engine.parse(cron).shortest_gap
    if jitter >= gap:
        raise JitterTooLong(
            f"jitter {jitter} s is not shorter than the shortest interval of "
            f"cron {cron!r} ({gap} s)",
            {"field": "jitter", "jitter": jitter, "interval": gap},
        )


def jitter_offset(schedule_id: UUID, jitter: int | None) -> int:
    """The row's offset in [0, jitter): a stable hash of its id, the same on every node.

    One offset per (schedule, jitter), so every occurrence fires at the same
    place in its window: stable across retries, restarts and takeovers, and a
    due row's next fire needs no per-row input beyond its stored offset.
    """
    if not jitter:
        return 0
    digest = hashlib.sha256(schedule_id.bytes).digest()
    return int.from_bytes(digest[:8], "big") % jitter


def fire_at(nominal: datetime | None, offset: int) -> datetime | None:
    """When a nominal occurrence fires: `nominal + offset` (None stays None)."""
    return None if nominal is None else nominal + timedelta(seconds=offset)


# -- pause -------------------------------------------------------------------------


def parse_instant(text: object, zone: str, what: str) -> datetime:
    """An ISO 8601 instant; a naive one is a wall time in `zone`. Raises ValueError."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be an ISO 8601 instant")
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError as error:
        raise ValueError(f"{what} {text!r} is not an ISO 8601 instant") from error
    if parsed.tzinfo is None:
        try:
            parsed = parsed.replace(tzinfo=ZoneInfo(zone))
        except ZoneInfoNotFoundError as error:  # pragma: no cover - zones are checked on write
            raise ValueError(f"unknown zone {zone!r}") from error
    return parsed.astimezone(ZoneInfo("UTC"))


def check_until(text: str | None, zone: str, now: datetime) -> datetime | None:
    """A pause's `until` as aware UTC, strictly after `now`; InvalidUntil otherwise."""
    if text is None:
        return None
    try:
        until = parse_instant(text, zone, "until")
    except ValueError as error:
        raise InvalidUntil(str(error), {"field": "until"}) from error
    if until <= now:
        raise InvalidUntil(
            f"until {until.isoformat()} is not in the future (now {now.isoformat()})",
            {"field": "until", "until": until.isoformat()},
        )
    return until


def check_note(note: object) -> str | None:
    """A pause note: None, or text of at most MAX_NOTE_LENGTH characters (empty → None)."""
    if note is None:
        return None
    if not isinstance(note, str) or "\x00" in note:
        raise InvalidRequest("note must be text", {"field": "note"})
    try:
        note.encode()  # a lone surrogate: neither database stores it
    except UnicodeEncodeError:
        raise InvalidRequest("note is not valid text", {"field": "note"}) from None
    note = note.strip()
    if len(note) > MAX_NOTE_LENGTH:
        raise InvalidRequest(f"note is longer than {MAX_NOTE_LENGTH} characters", {"field": "note"})
    return note or None


# -- backfill ------------------------------------------------------------------------


def backfill_range(
    start: object, end: object, zone: str, now: datetime
) -> tuple[datetime, datetime]:
    """[from, to) as aware UTC; InvalidBackfill when unparsable, to <= from or to > now.

    Only the past: occurrences after now are the dispatcher's to fire.
    """
    try:
        first = parse_instant(start, zone, "from")
        last = parse_instant(end, zone, "to")
    except ValueError as error:
        raise InvalidBackfill(str(error), {"field": "range"}) from error
    if last <= first:
        raise InvalidBackfill(
            f"to {last.isoformat()} is not after from {first.isoformat()}", {"field": "to"}
        )
    if last > now:
        raise InvalidBackfill(
            f"to {last.isoformat()} is in the future: a backfill is for the past",
            {"field": "to"},
        )
    return first, last


Missed = Literal["skip", "once", "all"]
MISSED: Final = ("skip", "once", "all")


def check_missed(value: object) -> Missed:
    """What a resume does with the occurrences its pause passed; InvalidRequest otherwise."""
    return one_of(value, MISSED, "missed")


def check_pause_missed(value: object, until: datetime | None) -> Missed | None:
    """A pause's policy for its own end: None when not given; InvalidUntil when given
    without `until` (only a pause that ends by itself has an end to apply it at)."""
    if value is None:
        return None
    missed = check_missed(value)
    if until is None:
        raise InvalidUntil(
            f"missed {missed!r} applies when the pause ends by itself: give until too, "
            "or choose missed when you resume",
            {"field": "until", "missed": missed},
        )
    return missed


def missed_range(
    paused_at: datetime, until: datetime | None, as_of: datetime
) -> tuple[datetime, datetime]:
    """[first, last) of the occurrences a pause passed, as of `as_of`: from `paused_at`
    up to `as_of` inclusive, and never past `until` (the occurrence at or after it
    is the one that ends the pause: it fires itself). A resume's `as_of` is its now;
    the fire that ends a pause by itself decides as of its occurrence."""
    last = as_of + timedelta(microseconds=1)
    return paused_at, last if until is None else min(until, last)


# Windows tried, smallest first, when looking for the latest occurrence of a range.
_LATEST_WINDOWS: Final = tuple(
    timedelta(seconds=s) for s in (60, 3600, 86_400, 31 * 86_400, 366 * 86_400)
)


def latest_occurrence(
    next_after: Callable[[datetime], datetime | None], start: datetime, end: datetime
) -> list[datetime]:
    """The latest nominal occurrence in [start, end) (an empty list when none), found in
    a window before `end` that grows until it holds one: never more than a window's
    occurrences are walked, whatever the range's length."""
    for window in (*_LATEST_WINDOWS, end - start):
        begin = max(start, end - window)
        found = backfill_occurrences(next_after, begin, end, cap=100_000)
        if found or begin == start:
            return found[-1:]
    return []


def backfill_occurrences(
    next_after: Callable[[datetime], datetime | None],
    start: datetime,
    end: datetime,
    cap: int = MAX_BACKFILL,
) -> list[datetime]:
    """The nominal occurrences in [start, end), in order; BackfillTooLarge past `cap`."""
    found: list[datetime] = []
    current = next_after(start - timedelta(microseconds=1))
    while current is not None and current < end:
        if len(found) == cap:
            raise BackfillTooLarge(
                f"the range holds more than {cap} occurrences; split it",
                {"cap": cap, "from": start.isoformat(), "to": end.isoformat()},
            )
        found.append(current)
        current = next_after(current)
    return found
