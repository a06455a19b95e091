"""An item's attempts with their output (`cronplane queue logs`).

One :class:`Attempt` per attempt that reached an outcome (store.attempts);
what a reader gets of one item, with its events, is `service.run_logs.RunLog`.
A success that ran and printed nothing has no attempt row: its item's row holds
all of it (`held_by_item`, `unwritten_success`).
Every text a person or program reads is redacted here (core.redact), as
`QueueItem.to_dict` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from cronplane.core.codec import to_document
from cronplane.core.model import QueueItem
from cronplane.core.redact import redact_text, redact_value

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


def held_by_item(ran: tuple[datetime, datetime] | None, output: dict[str, Any] | None) -> bool:
    """Whether a success is written as its item's row alone, with no attempt row: one
    that ran and printed nothing. Its item keeps its number (`attempts`), its
    start and its end for good (a succeeded item is never queued again), so the row
    only repeated them, and writing it cost no-op runs 14-24 % of their throughput on
    SQLite (docs/performance.md, issue 32's eighth sitting)."""
    return ran is not None and output is None


def unwritten_success(
    item: QueueItem, written: Sequence[Attempt], worker: Callable[[], str]
) -> Attempt | None:
    """The attempt a succeeded item holds without a row (`held_by_item`), `worker()` its
    runner (read only then); None when the item did not succeed or its last attempt
    has its row (one that printed, or one written before this rule)."""
    if item.status != "succeeded" or item.started_at is None or item.finished_at is None:
        return None
    if any(a.attempt == item.attempts for a in written):
        return None
    return Attempt(item.id, item.attempts, "succeeded", worker(), item.started_at, item.finished_at)
