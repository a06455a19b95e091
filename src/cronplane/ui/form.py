"""The schedule form: what the editor posts, parsed into the service's inputs.

Parsing only: text to JSON, text to a number. Every rule (job exists, cron
parses, payload matches the schema, which fields an app row may change) is
the service's, which answers with a coded error the editor shows in place.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final

from fastapi import Request

from cronplane.core.fields import BY_NAME, SCHEDULE_FIELDS
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.labels import labels_text, parse_text
from cronplane.core.model import DEFAULT_SCOPE_PART, Schedule
from cronplane.core.schedule_field import ScheduleField
from cronplane.core.validation import comma_list
from cronplane.core.wall_times import wall_text
from cronplane.errors import InvalidPayload, InvalidRequest

DEFAULT_CRON: Final = "0 0 * * *"  # the seed's editor starts at "every day at midnight"
MAX_FIELD: Final = 256


def _field_text(row: ScheduleField, value: Any, zone: str = "UTC") -> str:
    """A field's value as its input shows it (labels as `k=v, k2=v2`, an instant as the
    wall time in the row's zone)."""
    if row.kind == "instant" and isinstance(value, datetime):
        return wall_text(value, zone)
    if row.kind == "labels":
        return labels_text(value) if value else ""
    if row.kind == "names":
        return ", ".join(value or ())
    return _text(value)


def _text(value: object) -> str:
    """A stored value as the form shows it: JSON objects indented, None blank."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value, indent=2, ensure_ascii=False)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


# The table's rows the editor shows (`enabled` is the Status of a new row, and a stored
# row's Enable / Disable actions), and those it lays out by kind on its Details tab;
# the job, cron, zone and payload have inputs of their own.
FORM_FIELDS: Final = tuple(row for row in SCHEDULE_FIELDS if row.name != "enabled")
DETAIL_FIELDS: Final = tuple(
    row
    for row in FORM_FIELDS
    if row.kind in ("seconds", "count", "instant", "choice", "labels", "names")
)
# A new schedule's texts: each row's default, but a cron to start from and an empty object.
INITIAL_TEXT: Final = {
    **{row.name: _field_text(row, row.default_value()) for row in FORM_FIELDS},
    "cron": DEFAULT_CRON,
    "payload": "{}",
}
KEY_FIELDS: Final = ("stack", "environment", "name", "status", "revision")


@dataclass(frozen=True, slots=True)
class ScheduleForm:
    """The editor's fields as text, exactly as typed (re-shown after a refusal): the
    schedule's key, its status and revision, and a text per row of the field table."""

    stack: str = ""
    environment: str = DEFAULT_SCOPE_PART
    name: str = ""
    status: str = "ACTIVE"
    revision: str = ""
    texts: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, schedule: Schedule) -> ScheduleForm:
        """The form showing a stored schedule."""
        return cls(
            stack=schedule.stack,
            environment=schedule.environment,
            name=schedule.name,
            status="ACTIVE" if schedule.enabled else "INACTIVE",
            revision=str(schedule.revision),
            texts={
                f.name: _field_text(f, getattr(schedule, f.name), schedule.timezone)
                for f in FORM_FIELDS
            },
        )

    def text(self, name: str) -> str:
        """A row's text as typed (a new form: its initial text)."""
        return self.texts.get(name, INITIAL_TEXT[name])

    def keeping(self, typed: ScheduleForm, names: Collection[str]) -> ScheduleForm:
        """This form with the texts of `names` as `typed` has them (a refused save shows
        the stored row with what was typed in the fields that could be changed)."""
        kept = {name: typed.text(name) for name in names if name in INITIAL_TEXT}
        return replace(self, texts={**self.texts, **kept})

    @property
    def job(self) -> str:
        """The chosen job's name."""
        return self.text("job")

    @property
    def enabled(self) -> bool:
        """Status ACTIVE."""
        return self.status != "INACTIVE"

    def number_value(self, name: str) -> int | None:
        """A whole number; None when blank (its row's check answers for the range)."""
        text = self.text(name).strip()
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            row = BY_NAME[name]
            unit = " of seconds" if row.kind == "seconds" else ""
            raise row.error(
                f"{row.label.lower()} {text!r} is not a whole number{unit}", {"field": name}
            ) from None

    def value(self, name: str) -> Any:
        """The typed value of one of the schedule's own fields, parsed by its kind in the
        field table (core.fields)."""
        row = BY_NAME[name]
        text = self.text(name)
        if row.kind == "json":  # blank: an empty object for the payload, else the default
            if name == "payload" or text.strip():
                return json_object(text.strip() or "{}", name)
            return row.default_value()
        if row.kind in ("seconds", "count"):
            return self.number_value(name)
        if row.kind == "labels":
            return parse_text(text)
        if row.kind == "names":
            return comma_list(text)
        if row.kind == "instant":  # checked (and resolved in the zone) by the service
            return text.strip() or None
        if row.choices:  # a choice: anything else is its default, or the first
            if text in row.choices:
                return text
            return row.default if row.default is not None else row.choices[0]
        return text

    def revision_value(self) -> int | None:
        """The revision the editor was opened at (the service refuses a stale one)."""
        return int(self.revision) if self.revision.isdigit() else None

    def spec(self) -> ScheduleSpec:
        """The create input."""
        if not self.job:
            raise InvalidRequest("choose a job first", {"field": "job"})
        values = {f.name: self.value(f.name) for f in FORM_FIELDS}
        return ScheduleSpec(name=self.name.strip() or None, enabled=self.enabled, **values)

    def patch(self, editable: Collection[str]) -> SchedulePatch:
        """The update input, carrying only the `editable` fields (a job only when chosen)."""
        values = {
            f.name: self.value(f.name)
            for f in FORM_FIELDS
            if f.name in editable and (f.name != "job" or self.job)
        }
        return SchedulePatch(**values)


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


async def read_form(request: Request) -> ScheduleForm:
    """The posted editor form (unknown fields ignored, each field bounded)."""
    posted = await request.form()
    given = {
        name: raw
        for name in (*KEY_FIELDS, *INITIAL_TEXT)
        if isinstance(raw := posted.get(name), str)
    }
    # A JSON text is kept whole (the request body limit bounds it, the service
    # refuses a payload over 64 KiB with its code); other fields are short.
    texts = {
        f.name: given[f.name] if f.kind == "json" else given[f.name].strip()[:MAX_FIELD]
        for f in FORM_FIELDS
        if f.name in given
    }
    keys = {name: given[name].strip()[:MAX_FIELD] for name in KEY_FIELDS if name in given}
    return ScheduleForm(**keys, texts=texts)


def posted_fields(
    max_field: int, lists: Mapping[str, int] | None = None
) -> Callable[[Request], Awaitable[dict[str, Any]]]:
    """A route dependency reading a page's posted form (the Calendars, Jobs, Alerts and
    control forms): each text field stripped and cut at `max_field` characters; each of
    `lists` (name -> the most values kept) as the list of its values (checkboxes)."""
    many = dict(lists or {})

    async def read(request: Request) -> dict[str, Any]:
        posted = await request.form()
        fields: dict[str, Any] = {
            key: value.strip()[:max_field]
            for key, value in posted.items()
            if isinstance(value, str) and key not in many
        }
        for name, most in many.items():
            fields[name] = [str(v)[:max_field] for v in posted.getlist(name)][:most]
        return fields

    return read
