"""The schedule's request and response models, built from the field table (`core.fields`).

A row of `SCHEDULE_FIELDS` is a field of each model here, with the JSON type
its kind maps to, the description and the bounds the row states: the create
and patch bodies, a manifest's cron entry (`api.sync_schemas`), the row and
the declaration answered. A field added to the table reaches the OpenAPI
document without an edit here.

The request types bound only what is parsed (as `api.schemas` explains); the
row's own check (`ScheduleField.validate`) answers anything else with its
coded error, the same one the CLI gets. The models are made at import time
(`pydantic.create_model`), so mypy sees each as its static base (the key
fields, or the base class) under `TYPE_CHECKING`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal
from uuid import UUID

from pydantic import Field, StrictBool, create_model

from cronplane.api.schemas import (
    CronText,
    InstantText,
    JSONObject,
    LabelMap,
    NameText,
    Request,
    Response,
    ZoneText,
    described,
)
from cronplane.core import calendars
from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.schedule_field import ScheduleField

# Outer bound of a whole number in a request: fits the columns; the row's range is the
# service's to enforce.
WHOLE_BOUND: Final = 2**62

_REQUEST_TYPES: Final[dict[str, Any]] = {
    "name": NameText,
    "cron": CronText,
    "zone": ZoneText,
    "json": JSONObject,
    "bool": StrictBool,
    "instant": InstantText,
    "labels": LabelMap,
    "names": Annotated[list[NameText], Field(max_length=calendars.MAX_EXCLUDED)],
}
_ANSWER_TYPES: Final[dict[str, Any]] = {
    "name": str,
    "cron": str,
    "zone": str,
    "json": dict[str, Any],
    "seconds": int,
    "count": int,
    "bool": bool,
    "instant": datetime,
    "labels": dict[str, str],
    "names": list[str],
}


def _choice(field: ScheduleField) -> Any:
    return Literal.__getitem__(field.choices)


def request_type(field: ScheduleField) -> Any:
    """The field's type in a request body."""
    if field.kind in ("seconds", "count"):
        return Annotated[
            int,
            Field(ge=-WHOLE_BOUND, le=WHOLE_BOUND),
            described(minimum=field.minimum, maximum=field.maximum),
        ]
    if field.kind == "choice":
        return _choice(field)
    return _REQUEST_TYPES[field.kind]


def answer_type(field: ScheduleField) -> Any:
    """The field's type in an answer (null where a stored row may hold null)."""
    kind = _choice(field) if field.kind == "choice" else _ANSWER_TYPES[field.kind]
    return kind | None if field.stores_null else kind


def _about(field: ScheduleField) -> str | None:
    return field.about or None


def optional_field(field: ScheduleField) -> tuple[Any, Any]:
    """Optional in a request: absent means its default (or, on a patch, unchanged)."""
    return request_type(field) | None, Field(None, description=_about(field))


def create_field(field: ScheduleField) -> tuple[Any, Any]:
    """A create's field: required, or its default."""
    kind, about = request_type(field), _about(field)
    if field.required:
        return kind, Field(description=about)
    if field.factory is not None:
        return kind, Field(default_factory=field.factory, description=about)
    if field.default is None:
        return kind | None, Field(None, description=about)
    return kind, Field(field.default, description=about)


def answer_field(field: ScheduleField, *, since_default: bool = False) -> tuple[Any, Any]:
    """An answer's field; `since_default`: a field added later may be absent (a `declared`
    document leaves it out at its default)."""
    if since_default and field.since:
        return answer_type(field), Field(field.default_value(), description=_about(field))
    return answer_type(field), Field(description=_about(field))


def from_table(
    name: str,
    base: type[Any],
    doc: str,
    make: Any,
    fields: tuple[ScheduleField, ...] = SCHEDULE_FIELDS,
) -> Any:
    """A model named `name` over `base`, with one field per row made by `make(row)`."""
    return create_model(
        name, __base__=base, __doc__=doc, **{field.name: make(field) for field in fields}
    )


class NewScheduleKey(Request):
    """A create's key; the fields come from the table."""

    name: NameText | None = Field(None, description="Defaults to the job's name.")
    stack: NameText = "default"
    environment: NameText = "default"


class ScheduleRow(Response):
    """What a schedule row answers besides its settable fields (read-only)."""

    id: UUID
    tenant: str
    stack: str
    environment: str
    name: str
    source: Literal["app", "user", "system"]
    last_run: datetime | None
    next_run: datetime | None
    created_at: datetime
    updated_at: datetime
    revision: int
    declared: dict[str, Any] | None
    overrides: list[str]
    jitter_offset: int
    paused_at: datetime | None
    paused_until: datetime | None
    paused_note: str | None
    paused_by: str | None
    paused_missed: Literal["skip", "once", "all"] | None = Field(
        description="With paused_until: what the pause passed becomes when it ends by "
        "itself (as resume's `missed`); null: not given (skip)."
    )
    run_count: int = Field(description="Schedule fires so far (read-only).")
    runs_left: int | None = Field(description="max_runs - run_count; null: no limit.")
    state: Literal["active", "inactive", "paused", "ended", "done"] = Field(
        description="Derived, read-only: ended = window over or runs used up; "
        "done = a one-off that fired."
    )


if TYPE_CHECKING:
    ScheduleCreate = NewScheduleKey
    SchedulePatchBody = Request
    ScheduleOut = ScheduleRow
else:
    ScheduleCreate = from_table(
        "ScheduleCreate",
        NewScheduleKey,
        "A new `user` schedule in (stack, environment) of the path's tenant.",
        create_field,
    )
    SchedulePatchBody = from_table(
        "SchedulePatchBody",
        Request,
        "Fields to change; absent fields are left alone (null clears one that may be empty).",
        optional_field,
    )
    ScheduleOut = from_table(
        "ScheduleOut", ScheduleRow, "One schedule row (SPEC §2).", answer_field
    )


class SchedulePage(Response):
    """One page of schedules; pass `next_cursor` as `cursor` for the next (null: last page)."""

    items: list[ScheduleOut]
    next_cursor: str | None
