"""A schedule's history as the History tab shows it: occurrences, runs and changes.

The occurrence ledger (SPEC §6) is the events whose code is one of the
dispatcher's outcomes; each says what happened to one `scheduled_for`
(fired, with how many missed occurrences it coalesced, or skipped and why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from cronplane import events as ev
from cronplane.core.model import QueueItem
from cronplane.events import Event

# Outcome label and tone (a CSS class) per ledger code.
LEDGER: Final[dict[str, tuple[str, str]]] = {
    ev.SCHEDULE_FIRED.text: ("fired", "ok"),
    ev.SKIPPED_OVERLAP.text: ("skipped: previous run still queued or running", "warn"),
    ev.SKIPPED_MISFIRE.text: ("skipped: later than its misfire grace", "warn"),
    ev.JOB_MISSING.text: ("not fired: job missing or inactive", "bad"),
    ev.NEXT_RUN_FAILED.text: ("not fired: next run could not be computed; disabled", "bad"),
    ev.SCHEDULE_RUN_NOW.text: ("run now (by hand)", "info"),
}
ITEM_TONES: Final = {
    "queued": "info",
    "running": "info",
    "succeeded": "ok",
    "failed": "bad",
    "expired": "bad",
    "cancelled": "warn",
}
HISTORY_EVENTS: Final = 100
HISTORY_ITEMS: Final = 20


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One ledger row: what happened to one due occurrence (or a run-now)."""

    event: Event
    outcome: str
    tone: str
    coalesced: int | None

    @property
    def missed(self) -> int:
        """Occurrences folded into this fire besides the one it was for."""
        return max(0, (self.coalesced or 1) - 1)


@dataclass(frozen=True, slots=True)
class History:
    """The History tab: ledger, queue items and changes, newest first."""

    occurrences: list[Occurrence]
    items: list[QueueItem]
    changes: list[Event]


def item_tone(item: QueueItem) -> str:
    """The CSS tone of an item's status."""
    return ITEM_TONES.get(item.status, "info")


def history_of(events: list[Event], items: list[QueueItem]) -> History:
    """Split a schedule's events into the ledger and the changes."""
    occurrences: list[Occurrence] = []
    changes: list[Event] = []
    for event in events:
        label = LEDGER.get(event.code)
        if label is None:
            changes.append(event)
            continue
        coalesced = event.detail.get("coalesced")
        occurrences.append(
            Occurrence(
                event=event,
                outcome=label[0],
                tone=label[1],
                coalesced=coalesced if isinstance(coalesced, int) else None,
            )
        )
    return History(occurrences, items, changes)
