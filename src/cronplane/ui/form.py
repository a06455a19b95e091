"""The schedule form: what the editor posts, parsed into the service's inputs.

Parsing only: text to JSON, text to a number. Every rule (job exists, cron
parses, payload matches the schema, which fields an app row may change) is
the service's, which answers with a coded error the editor shows in place.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, fields
from typing import Any, Final

from fastapi import Request

from cronplane.core.model import (
    DEFAULT_SCOPE_PART,
    DEFAULT_ZONE,
    Schedule,
    SchedulePatch,
    ScheduleSpec,
)
from cronplane.errors import InvalidPayload, InvalidRequest

DEFAULT_CRON: Final = "0 0 * * *"  # the seed's editor starts at "every day at midnight"
MAX_FIELD: Final = 256
STATUSES: Final = ("ACTIVE", "INACTIVE")


@dataclass(frozen=True, slots=True)
class ScheduleForm:
    """The editor's fields as text, exactly as typed (re-shown after a refusal)."""

    job: str = ""
    stack: str = ""
    environment: str = DEFAULT_SCOPE_PART
    name: str = ""
    status: str = "ACTIVE"
    cron: str = DEFAULT_CRON
    timezone: str = DEFAULT_ZONE
    payload: str = "{}"
    misfire_grace: str = ""
    overlap: str = "skip"
    revision: str = ""

    @classmethod
    def of(cls, schedule: Schedule) -> ScheduleForm:
        """The form showing a stored schedule."""
        return cls(
            job=schedule.job,
            stack=schedule.stack,
            environment=schedule.environment,
            name=schedule.name,
            status="ACTIVE" if schedule.enabled else "INACTIVE",
            cron=schedule.cron,
            timezone=schedule.timezone,
            payload=json.dumps(schedule.payload, indent=2, ensure_ascii=False),
            misfire_grace="" if schedule.misfire_grace is None else str(schedule.misfire_grace),
            overlap=schedule.overlap,
            revision=str(schedule.revision),
        )

    @property
    def enabled(self) -> bool:
        """Status ACTIVE."""
        return self.status != "INACTIVE"

    def payload_value(self) -> dict[str, Any]:
        """The payload text as a JSON object; InvalidPayload (field `payload`) otherwise."""
        try:
            value = json.loads(self.payload or "{}")
        except json.JSONDecodeError as error:
            raise InvalidPayload(
                f"payload is not JSON: {error.msg} at line {error.lineno} column {error.colno}",
                {"field": "payload"},
            ) from error
        if not isinstance(value, dict):
            raise InvalidPayload(
                f"payload must be a JSON object, not {type(value).__name__}", {"field": "payload"}
            )
        return value

    def grace_value(self) -> int | None:
        """Misfire grace in seconds; None when blank ("always fire once")."""
        text = self.misfire_grace.strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            raise InvalidRequest(
                f"misfire grace {text!r} is not a whole number of seconds",
                {"field": "misfire_grace"},
            ) from None

    def revision_value(self) -> int | None:
        """The revision the editor was opened at (the service refuses a stale one)."""
        return int(self.revision) if self.revision.isdigit() else None

    def spec(self) -> ScheduleSpec:
        """The create input."""
        if not self.job:
            raise InvalidRequest("choose a job first", {"field": "job"})
        return ScheduleSpec(
            job=self.job,
            cron=self.cron,
            name=self.name.strip() or None,
            timezone=self.timezone,
            payload=self.payload_value(),
            misfire_grace=self.grace_value(),
            overlap="allow" if self.overlap == "allow" else "skip",
            enabled=self.enabled,
        )

    def patch(self, editable: Collection[str]) -> SchedulePatch:
        """The update input, carrying only the `editable` fields."""
        values: dict[str, Any] = {}
        if "job" in editable and self.job:
            values["job"] = self.job
        if "cron" in editable:
            values["cron"] = self.cron
        if "timezone" in editable:
            values["timezone"] = self.timezone
        if "payload" in editable:
            values["payload"] = self.payload_value()
        if "misfire_grace" in editable:
            values["misfire_grace"] = self.grace_value()
        if "overlap" in editable:
            values["overlap"] = "allow" if self.overlap == "allow" else "skip"
        return SchedulePatch(**values)


async def read_form(request: Request) -> ScheduleForm:
    """The posted editor form (unknown fields ignored, each field bounded)."""
    posted = await request.form()
    values: dict[str, str] = {}
    for field in fields(ScheduleForm):
        raw = posted.get(field.name)
        if isinstance(raw, str):
            # The payload is kept whole (the request body limit bounds it, the
            # service refuses over 64 KiB with its code); other fields are short.
            values[field.name] = raw if field.name == "payload" else raw.strip()[:MAX_FIELD]
    return ScheduleForm(**values)
