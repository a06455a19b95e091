"""The body of `GET …/queue/items/{id}/logs`: an item with its attempts and events."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import field_validator

from cronplane.api.schemas import EventOut, QueueItemOut, Response
from cronplane.core import redact


class AttemptOut(Response):
    """One attempt that reached an outcome: when it ran, how it ended, what it printed.

    `output` by target kind: `command:` {exit_code, stdout, stderr} (each stream's
    last 64 KiB); `python:` {log} (the records it logged, the last 64 Ki characters);
    `webhook:` {status, body, truncated} (at most 512 characters of the body).
    Null: the attempt noted nothing."""

    item_id: UUID
    attempt: int
    outcome: Literal["succeeded", "retry", "failed", "timeout", "cancelled"]
    worker: str
    started_at: datetime | None
    finished_at: datetime
    seconds: float | None
    error: str | None
    output: dict[str, Any] | None

    @field_validator("error", "output")
    @classmethod
    def _masked(cls, value: Any) -> Any:
        return redact.redact_value(value)  # output may print a URL with a credential


class RunLogOut(Response):
    """A queue item, its attempts oldest first, and its events oldest first."""

    item: QueueItemOut
    attempts: list[AttemptOut]
    events: list[EventOut]
