"""A schedule's recent occurrences as a picture: one bar each, drawn server-side as SVG.

Each occurrence of the ledger (newest last) is a bar: its colour says what came of it
(succeeded, failed, skipped, still queued or running), its height how long its run took
against the longest shown, and a dot under it that it fired late (a second or more).
Every bar carries its own text (`<title>`), and the picture one summary for screen
readers. No script draws it: it is part of the page (issue 39).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from markupsafe import Markup, escape

from cronplane import events as ev
from cronplane.core.model import QueueItem
from cronplane.ui.history import History

LIMIT: Final = 30
WIDTH: Final = 600
HEIGHT: Final = 64
LATE_MS: Final = 1000
SPARK_WIDTH: Final = 96
SPARK_HEIGHT: Final = 22
# The ledger rows that put an item on the queue (the rest are skips and ends).
FIRES: Final = frozenset({ev.SCHEDULE_FIRED.text, ev.SCHEDULE_RUN_NOW.text})
# What an item's status says of its occurrence, as a tone (the CSS class of the bar).
ITEM_TONE: Final = {
    "succeeded": "ok",
    "failed": "bad",
    "expired": "bad",
    "cancelled": "warn",
    "queued": "info",
    "running": "info",
}


@dataclass(frozen=True, slots=True)
class Mark:
    """One occurrence as the timeline draws it."""

    at: datetime
    tone: str
    text: str
    seconds: float | None = None  # how long its run took, when it finished
    late: bool = False


def _duration(item: QueueItem) -> float | None:
    if item.started_at is None or item.finished_at is None:
        return None
    return max(0.0, (item.finished_at - item.started_at).total_seconds())


def marks(history: History, limit: int = LIMIT) -> list[Mark]:
    """The newest `limit` occurrences, oldest first, each with its run's item when it
    fired (by the item's id the event names, else the instant it was for)."""
    by_id = {item.id: item for item in history.items}
    by_instant = {item.scheduled_for: item for item in history.items if item.scheduled_for}
    found: list[Mark] = []
    for row in history.occurrences:
        at = row.event.scheduled_for or row.event.created_at
        item = None
        if row.event.code in FIRES:  # its item by id (a fire's event names it), else instant
            instant = row.event.scheduled_for
            item = by_id.get(row.event.item_id) if row.event.item_id else None
            item = item or (by_instant.get(instant) if instant is not None else None)
        tone, text = row.tone, row.outcome
        seconds = None
        if item is not None:
            tone = ITEM_TONE.get(item.status, tone)
            seconds = _duration(item)
            text += f", {item.status}" + (f" in {seconds:.1f} s" if seconds is not None else "")
        late = row.late_ms is not None and row.late_ms >= LATE_MS
        if late:
            text += f", {row.late_ms:,} ms late"
        found.append(Mark(at, tone, f"{at:%Y-%m-%d %H:%M:%S} UTC: {text}", seconds, late))
    found.sort(key=lambda mark: mark.at)
    return found[-limit:]


def summary(shown: list[Mark]) -> str:
    """The picture's text: how many occurrences, and how many of each outcome."""
    if not shown:
        return "No occurrence yet."
    counts = {tone: sum(1 for m in shown if m.tone == tone) for tone in ("ok", "bad", "warn")}
    words = f"{counts['ok']} succeeded or fired, {counts['bad']} failed, {counts['warn']} skipped"
    return f"The last {len(shown)} occurrences: {words}."


def item_marks(items: list[QueueItem]) -> list[Mark]:
    """A row's recent items (oldest first) as marks: the listing's sparkline, which has
    the queue's items at hand, not the ledger's skips."""
    found = []
    for item in items:
        at = item.scheduled_for or item.created_at
        seconds = _duration(item)
        late_ms = None
        if item.scheduled_for is not None and item.started_at is not None:
            late_ms = int((item.started_at - item.scheduled_for).total_seconds() * 1000)
        text = f"{at:%Y-%m-%d %H:%M:%S} UTC: {item.source}, {item.status}"
        text += f" in {seconds:.1f} s" if seconds is not None else ""
        late = late_ms is not None and late_ms >= LATE_MS
        text += f", started {late_ms:,} ms late" if late else ""
        found.append(Mark(at, ITEM_TONE.get(item.status, "info"), text, seconds, late))
    return found


def sparkline(items: list[QueueItem]) -> Markup:
    """A listing row's recent runs, small: the timeline's picture at 96 × 22 px."""
    return timeline_svg(item_marks(items), width=SPARK_WIDTH, height=SPARK_HEIGHT, css="sparkline")


def timeline_svg(
    shown: list[Mark], width: int = WIDTH, height: int = HEIGHT, css: str = "timeline"
) -> Markup:
    """The SVG of `shown` (bars left to right, oldest first), `width` × `height` px."""
    label = escape(summary(shown))
    size = 'width="100%"' if css == "timeline" else f'width="{width}"'
    parts = [
        f'<svg class="{css}" viewBox="0 0 {width} {height}" {size} height="{height}"'
        f' role="img" aria-label="{label}" preserveAspectRatio="none">'
    ]
    if shown:
        longest = max((m.seconds for m in shown if m.seconds), default=0.0)
        slot = width / max(len(shown), LIMIT // 3)
        floor = height - 8  # the bars' baseline; the late dots sit under it
        for index, mark in enumerate(shown):
            share = (mark.seconds / longest) if longest and mark.seconds else 0.0
            bar = max(6.0, share * (floor - 2))
            x = index * slot + slot * 0.15
            parts.append(
                f'<g class="mark tone-{escape(mark.tone)}"><title>{escape(mark.text)}</title>'
                f'<rect x="{x:.1f}" y="{floor - bar:.1f}" width="{slot * 0.7:.1f}"'
                f' height="{bar:.1f}" rx="1"/>'
                + (
                    f'<circle class="late" cx="{x + slot * 0.35:.1f}" cy="{height - 3}" r="2.5"/>'
                    if mark.late
                    else ""
                )
                + "</g>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))
