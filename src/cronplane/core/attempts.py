"""An item's attempts with their output, and the run they make (`cronplane queue logs`).

One :class:`Attempt` per attempt that reached an outcome (store.attempts);
a :class:`RunLog` is what a reader gets of one item: the item, its attempts
oldest first, and the item's ledger events. Every text a person or program
reads is redacted here (core.redact), as `QueueItem.to_dict` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from cronplane.core.codec import from_document, to_document
from cronplane.core.model import QueueItem
from cronplane.core.redact import redact_text, redact_value
from cronplane.events import Event

OUTCOMES: Final = ("succeeded", "retry", "failed", "timeout", "cancelled")
# The order the output's fields are shown in; others follow, sorted.
OUTPUT_ORDER: Final = ("exit_code", "status", "truncated", "stdout", "stderr", "body", "log")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of an item: when it ran, how it ended, what it printed or answered."""

    item_id: UUID
    attempt: int  # 1-based
    outcome: str  # one of OUTCOMES
    worker: str
    started_at: datetime | None  # None: it never started (cancelled after its claim)
    finished_at: datetime
    error: str | None = None
    output: dict[str, Any] | None = None

    @property
    def seconds(self) -> float | None:
        """How long the target ran (None: it never started)."""
        if self.started_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    def output_fields(self) -> list[tuple[str, Any]]:
        """The output's fields in reading order, redacted."""
        found = redact_value(dict(self.output or {}))
        known = [(name, found.pop(name)) for name in OUTPUT_ORDER if name in found]
        return known + sorted(found.items())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view; credentials in URLs masked."""
        document = to_document(self)
        document["seconds"] = self.seconds
        document["error"] = None if self.error is None else redact_text(self.error)
        document["output"] = None if self.output is None else dict(self.output_fields())
        return document


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
