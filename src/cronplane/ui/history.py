"""A schedule's history as the History tab shows it: run outcomes apart from changes.

The occurrence ledger (SPEC §6) is the events whose code is one of the
dispatcher's outcomes; each says what happened to one `scheduled_for`
(fired, with how many missed occurrences it coalesced, or skipped and why).
With the queue items it makes the *runs*. Configuration changes are the
schedule's CRUD events (rollbacks and restores too), each with its fields
old → new (the service's `detail.changes`) and its actor, beside the operator
actions that change no field (pause with its note and until, resume with what
it enqueued, backfill, cancel), each with what its detail says (a run now is
in the ledger, with who asked); the
worker's per-attempt events are not changes (the items say how each run went).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

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
    ev.SKIPPED_PAUSED.text: ("skipped: paused", "warn"),
    ev.SKIPPED_QUOTA.text: ("skipped: the tenant's quota", "warn"),
    ev.SKIPPED_EXCLUDED.text: ("skipped: a day its calendar excludes", "warn"),
    ev.SCHEDULE_RUN_NOW.text: ("run now (by hand)", "info"),
    ev.SCHEDULE_ENDED.text: ("ended: no occurrence left", "info"),
}
# Why a schedule ended (V200150SCHEND's detail.reason), said after "ended: ".
ENDED_REASONS: Final = {
    "end_at": "its window closed",
    "max_runs": "max runs reached",
    "no_occurrence": "no occurrence left",
    "edit": "an edit left no occurrence",
}
ITEM_TONES: Final = {
    "queued": "info",
    "running": "info",
    "succeeded": "ok",
    "failed": "bad",
    "expired": "bad",
    "cancelled": "warn",
}
# The events that change a schedule's configuration (the Changes list).
CONFIGURATION: Final = frozenset(
    code.text
    for code in (
        ev.SCHEDULE_CREATED,
        ev.SCHEDULE_UPDATED,
        ev.SCHEDULE_ENABLED,
        ev.SCHEDULE_DISABLED,
        ev.SCHEDULE_RESET,
        ev.SCHEDULE_REMOVED,
        ev.SCHEDULE_ROLLED_BACK,
        ev.SCHEDULE_RESTORED,
        ev.SCHEDULE_PROMOTED,
    )
)
# Operator actions that change no field (with what their detail says, and who): listed
# with the changes, so the tab answers "who paused this, why, and what did the resume do".
ACTIONS: Final = {
    ev.SCHEDULE_PAUSED.text: ("note", "until", "missed"),
    ev.SCHEDULE_RESUMED.text: ("note", "paused_by", "paused_at", "missed", "enqueued"),
    ev.BACKFILL_ENQUEUED.text: ("from", "to", "occurrences", "enqueued", "already_fired"),
    ev.ITEM_CANCELLED.text: ("was",),
    ev.ITEM_CANCEL_REQUESTED.text: ("was",),
    # Not an operator's, but an action the schedule's alert took that did not land.
    ev.ALERT_UNSENT.text: ("channel", "kind", "attempt", "delivery", "error"),
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
    # Milliseconds after its fire instant the dispatcher decided it (detail.late_ms).
    late_ms: int | None = None

    @property
    def missed(self) -> int:
        """Occurrences folded into this fire besides the one it was for."""
        return max(0, (self.coalesced or 1) - 1)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of a change: its value before and after."""

    field: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class Change:
    """One configuration change (its fields old → new) or operator action (its detail)."""

    event: Event
    fields: list[FieldChange]
    action: bool = False


@dataclass(frozen=True, slots=True)
class History:
    """The History tab: ledger and queue items (runs), and changes, newest first."""

    occurrences: list[Occurrence]
    items: list[QueueItem]
    changes: list[Change]


def item_tone(item: QueueItem) -> str:
    """The CSS tone of an item's status (a queued item after a failed attempt: warn)."""
    return "warn" if retrying(item) else ITEM_TONES.get(item.status, "info")


def retrying(item: QueueItem) -> bool:
    """True when an attempt failed and the item waits for its next one (`available_at`)."""
    return item.status == "queued" and item.attempts > 0 and item.error is not None


def attempts_text(item: QueueItem) -> str:
    """`attempt 1 of 3`, and why no more were made when it failed early (a permanent
    failure: a webhook's 4xx, a refused target)."""
    text = f"attempt {item.attempts} of {item.max_attempts}"
    if item.status == "failed" and item.attempts < item.max_attempts:
        text += " (not retried)"
    return text


def field_changes(event: Event) -> list[FieldChange]:
    """The event's `detail.changes` (`{field: {from, to}}`); other detail as `field → value`."""
    changes = event.detail.get("changes")
    found: list[FieldChange] = []
    if isinstance(changes, dict):
        for name, values in sorted(changes.items()):
            if isinstance(values, dict):
                found.append(FieldChange(name, values.get("from"), values.get("to")))
    named = event.detail.get("fields")
    if isinstance(named, list):
        found.extend(
            FieldChange(str(name), None, None)
            for name in named
            if isinstance(changes, dict) and name not in changes
        )
    if not found and "last_run" in event.detail:
        found.append(FieldChange("last_run", None, event.detail["last_run"]))
    return found


def action_details(event: Event) -> list[FieldChange]:
    """An operator action's detail as `field: value` rows (old None: not a change)."""
    return [
        FieldChange(name, None, event.detail[name])
        for name in ACTIONS[event.code]
        if event.detail.get(name) not in (None, "", False)
    ]


def history_of(events: list[Event], items: list[QueueItem]) -> History:
    """Split a schedule's events into the ledger and the configuration changes."""
    occurrences: list[Occurrence] = []
    changes: list[Change] = []
    for event in events:
        if event.code in ACTIONS:
            changes.append(Change(event, action_details(event), action=True))
        label = LEDGER.get(event.code)
        if label is None:
            if event.code in CONFIGURATION:
                changes.append(Change(event, field_changes(event)))
            continue
        coalesced = event.detail.get("coalesced")
        outcome = label[0]
        if event.code == ev.SKIPPED_EXCLUDED.text and "calendar" in event.detail:
            outcome = f"skipped: {event.detail.get('why')} (calendar {event.detail['calendar']})"
        moved = event.detail.get("moved_from")
        if isinstance(moved, list) and moved:
            outcome += f", moved from {', '.join(str(m)[:10] for m in moved)} by its calendar"
        if event.code == ev.SCHEDULE_ENDED.text:
            reason = ENDED_REASONS.get(event.detail.get("reason", ""), "no occurrence left")
            outcome = f"ended: {reason}"
        if event.code == ev.SCHEDULE_RUN_NOW.text:
            retried = event.detail.get("retry_of")
            outcome = f"run now by {event.actor}"
            if isinstance(retried, str):  # the Jobs page's Retry of a failed item
                outcome = f"retry of item …{retried[-8:]} by {event.actor}"
        if event.detail.get("payload_overridden"):  # run now with the dialog's own payload
            outcome += ", payload overridden"
        occurrences.append(
            Occurrence(
                event=event,
                outcome=outcome,
                tone=label[1],
                coalesced=coalesced if isinstance(coalesced, int) else None,
                late_ms=late if isinstance(late := event.detail.get("late_ms"), int) else None,
            )
        )
    return History(occurrences, items, changes)
