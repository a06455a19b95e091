"""What a reader gets of one run (`cronplane queue logs`, the API, the run page): the item,
its attempts with their output (core.attempts) oldest first, and the item's ledger
events, every text redacted (core.redact)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cronplane.core.attempts import Attempt
from cronplane.core.codec import from_document, to_document
from cronplane.core.model import QueueItem
from cronplane.core.redact import redact_value
from cronplane.events import Event


@dataclass(frozen=True, slots=True)
class RunLog:
    """One item as its run page shows it: the item, its attempts, its events."""

    item: QueueItem
    attempts: list[Attempt] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # oldest first

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view (CLI `--json`, API); credentials in URLs masked."""
        return {
            "item": self.item.to_dict(),
            "attempts": [attempt.to_dict() for attempt in self.attempts],
            "events": [redact_value(to_document(event)) for event in self.events],
        }


def run_log_from_document(document: dict[str, Any]) -> RunLog:
    """The RunLog a `to_dict` answer stands for (the remote client's read)."""
    return RunLog(
        from_document(QueueItem, document["item"]),
        [from_document(Attempt, row) for row in document["attempts"]],
        [from_document(Event, row) for row in document["events"]],
    )
