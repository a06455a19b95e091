"""The schedule form: what the editor posts, parsed into the service's inputs.

Parsing only: text to JSON, text to a number. Every rule (job exists, cron
parses, payload matches the schema, which fields an app row may change) is
the service's, which answers with a coded error the editor shows in place.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Final

from fastapi import Request

from cronplane.core.choices import DEFAULT_ZONE
from cronplane.core.codec import field_names
from cronplane.core.fields import BY_NAME
from cronplane.core.model import (
    DEFAULT_SCOPE_PART,
    Schedule,
    SchedulePatch,
    ScheduleSpec,
)
from cronplane.errors import InvalidMaxRuns, InvalidPayload, InvalidRequest

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
    jitter: str = ""
    timeout: str = ""
    # The active window (ISO 8601; without an offset, in the zone) and the run limit.
    start_at: str = ""
    end_at: str = ""
    max_runs: str = ""
    revision: str = ""

    @classmethod
    def of(cls, schedule: Schedule) -> ScheduleForm:
        """The form showing a stored schedule."""
        return cls(
            stack=schedule.stack,
            environment=schedule.environment,
            name=schedule.name,
            status="ACTIVE" if schedule.enabled else "INACTIVE",
            revision=str(schedule.revision),
            **{name: _text(getattr(schedule, name)) for name in SCHEDULE_FIELDS},
        )

    @property
    def enabled(self) -> bool:
        """Status ACTIVE."""
        return self.status != "INACTIVE"

    def payload_value(self) -> dict[str, Any]:
        """The payload text as a JSON object; InvalidPayload (field `payload`) otherwise."""
        return payload_object(self.payload or "{}")

    def json_value(self, name: str) -> Any:
        """A JSON field's text as its object (blank: the field's default)."""
        if name == "payload":
            return self.payload_value()
        text = getattr(self, name).strip()
        return json_object(text, name) if text else BY_NAME[name].default_value()

    def number_value(self, name: str) -> int | None:
        """A whole number; None when blank (misfire grace: "always fire once"; max runs: no limit)."""
        text = getattr(self, name).strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            unit = "" if name == "max_runs" else " of seconds"
            error = InvalidMaxRuns if name == "max_runs" else InvalidRequest
            raise error(
                f"{name.replace('_', ' ')} {text!r} is not a whole number{unit}",
                {"field": name},
            ) from None

    def value(self, name: str) -> Any:
        """The typed value of one of the schedule's own fields (SCHEDULE_FIELDS), parsed by
        its kind in the field table (core.fields)."""
        field = BY_NAME[name]
        if field.kind == "json":
            return self.json_value(name)
        if field.kind in ("seconds", "count"):
            return self.number_value(name)
        text = getattr(self, name)
        if field.kind == "instant":  # checked (and resolved in the zone) by the service
            return text.strip() or None
        if field.choices:  # a choice: anything else is the first
            return text if text in field.choices else field.choices[0]
        return text

    def revision_value(self) -> int | None:
        """The revision the editor was opened at (the service refuses a stale one)."""
        return int(self.revision) if self.revision.isdigit() else None

    def spec(self) -> ScheduleSpec:
        """The create input."""
        if not self.job:
            raise InvalidRequest("choose a job first", {"field": "job"})
        values = {name: self.value(name) for name in SCHEDULE_FIELDS}
        return ScheduleSpec(name=self.name.strip() or None, enabled=self.enabled, **values)

    def patch(self, editable: Collection[str]) -> SchedulePatch:
        """The update input, carrying only the `editable` fields (a job only when chosen)."""
        values = {
            name: self.value(name)
            for name in SCHEDULE_FIELDS
            if name in editable and (name != "job" or self.job)
        }
        return SchedulePatch(**values)


# The form's inputs that are a schedule's own fields (the others: its key, status, revision).
SCHEDULE_FIELDS: Final = tuple(
    name for name in field_names(SchedulePatch) if name in ScheduleForm.__dataclass_fields__
)


def payload_object(text: str) -> dict[str, Any]:
    """Payload text typed in the console as a JSON object; InvalidPayload otherwise."""
    return json_object(text, "payload")


def json_object(text: str, name: str) -> dict[str, Any]:
    """A field's text typed in the console as a JSON object; InvalidPayload (naming the
    field) otherwise."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidPayload(
            f"{name} is not JSON: {error.msg} at line {error.lineno} column {error.colno}",
            {"field": name},
        ) from error
    if not isinstance(value, dict):
        raise InvalidPayload(
            f"{name} must be a JSON object, not {type(value).__name__}", {"field": name}
        )
    return value


def _text(value: object) -> str:
    """A stored value as the form shows it: JSON objects indented, None blank."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, indent=2, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


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
