"""Request and response models. Requests refuse unknown fields and bound every string.

Bounds enforced here are generous outer limits that keep what is parsed
small; the service applies the exact rules (names of 1-64 characters, 64 KiB
payloads, depth 32, cron length) and answers with its specific codes, so the
API and the local CLI refuse the same input with the same code. The exact
rules are still *described* in the OpenAPI document (`Described`: schema
only, not enforced by pydantic), so generated clients and fuzzers know them.
Booleans are strict: `0`, `1` and `"true"` are not booleans.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

from cronplane.core import labels, redact, target_rules, validation
from cronplane.core.choices import SOURCES
from cronplane.core.controls import Missed
from cronplane.core.dst import Gap, Repeat
from cronplane.core.queries import MAX_PAGE, MAX_SEARCH, ScheduleQuery
from cronplane.core.selectors import MAX_TEXT as MAX_SELECTOR
from cronplane.core.selectors import SELECTOR_REGEX

MAX_NAME: Final = 256  # the service allows 64; longer is refused here without a lookup
MAX_CRON: Final = 1024  # the service allows 256 and quotes the offender in its message
MAX_ZONE: Final = 64
MAX_TEXT: Final = 2048
MAX_CRONS: Final = 10_000  # per sync; the body limit bounds it first anyway


def described(**schema: Any) -> Any:
    """Field metadata that only describes (JSON Schema keywords); the service enforces it."""
    return Field(json_schema_extra=schema)


# What the service accepts, for the document (core/validation.py is the rule).
NAME_SCHEMA: Final = {"pattern": validation.NAME_REGEX, "maxLength": validation.MAX_NAME_LENGTH}
NO_NUL: Final = "^[^\\x00]*$"
# A free-text query parameter's schema: no NUL (api.limits refuses one in any parameter).
NUL_FREE: Final[dict[str, Any]] = {"pattern": NO_NUL}

NameText = Annotated[str, Field(min_length=1, max_length=MAX_NAME), described(**NAME_SCHEMA)]
# A label map (a schedule's, a job's): outer bounds here; the rules (core.labels)
# described for clients and fuzzers.
LabelMap = Annotated[
    dict[Annotated[str, Field(max_length=256)], Annotated[str, Field(max_length=256)]],
    Field(max_length=256),
    described(
        maxProperties=labels.MAX_LABELS,
        propertyNames={"pattern": labels.KEY_REGEX},
        additionalProperties={"type": "string", "pattern": labels.VALUE_REGEX},
    ),
]
# A name in a URL path (tenant, stack, environment, schedule, job).
NameSegment = Annotated[
    str, Path(min_length=1, max_length=MAX_NAME, json_schema_extra=dict(NAME_SCHEMA))
]
CronText = Annotated[
    str,
    Field(min_length=1, max_length=MAX_CRON),
    described(maxLength=validation.MAX_CRON_LENGTH, pattern=NO_NUL),
]
ZoneText = Annotated[str, Field(min_length=1, max_length=MAX_ZONE), described(pattern=NO_NUL)]
# Checked by the service (X400150WININV), not by the schema, so a bad value gets the same
# coded error from every edge.
InstantText = Annotated[
    str,
    Field(
        max_length=64,
        description="ISO 8601 instant, e.g. 2027-01-01T03:00+01:00; without an offset, "
        "a wall time in the schedule's zone.",
    ),
    described(pattern=NO_NUL),
]
TargetText = Annotated[
    str,
    Field(min_length=1, max_length=MAX_TEXT),
    described(pattern=target_rules.TARGET_REGEX, maxLength=target_rules.MAX_TARGET_LENGTH),
]
TitleText = Annotated[
    str,
    Field(max_length=MAX_TEXT),
    described(maxLength=validation.MAX_TITLE_LENGTH, pattern=NO_NUL),
]
JSONObject = dict[str, Any]


class Request(BaseModel):
    """Base of request bodies: unknown fields are an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


class Response(BaseModel):
    """Base of response bodies."""

    model_config = ConfigDict(extra="forbid")


class ErrorBody(Response):
    """Every error: a code from docs/codes.md, a message for people, details for programs."""

    code: str = Field(pattern=r"^X\d{6}[A-Z]{6}$", examples=["X404902SCHNFD"])
    message: str
    detail: dict[str, Any]


# -- schedules -------------------------------------------------------------------

NameFilter = Annotated[
    str | None, Field(min_length=1, max_length=MAX_NAME, json_schema_extra=NUL_FREE)
]


class ScheduleQueryParams(BaseModel):
    """The listing's query parameters: `core.queries.ScheduleQuery`, field for field
    (tests/api/test_schedule_query.py), with the limits the OpenAPI document states.
    Unknown parameters are ignored, as a query string's are."""

    stack: NameFilter = None
    environment: NameFilter = None
    source: str | None = Field(default=None, pattern=f"^({'|'.join(SOURCES)})$")
    enabled: bool | None = None
    job: NameFilter = None
    search: str | None = Field(default=None, max_length=MAX_SEARCH, json_schema_extra=NUL_FREE)
    # A label selector (core.selectors): Kubernetes' syntax, e.g. `team=payments,!legacy`.
    # The document carries its grammar as a pattern; the parser refuses, naming the place.
    selector: str | None = Field(
        default=None, max_length=MAX_SELECTOR, json_schema_extra={"pattern": SELECTOR_REGEX}
    )
    cursor: str | None = Field(default=None, max_length=1024, json_schema_extra=NUL_FREE)
    limit: int = Field(default=ScheduleQuery().limit, ge=1, le=MAX_PAGE)


class PauseBody(Request):
    """Pause: `until` an ISO 8601 instant (naive: the row's zone) or null; a note for people;
    `missed`, only with `until`: what the pause passed becomes when it ends by itself
    (as resume's; absent: skip; without `until`: 400 X400102UNTINV)."""

    until: Annotated[str, Field(max_length=64)] | None = None
    note: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    missed: Missed | None = None


class ResumeBody(Request):
    """Resume: what the occurrences the pause passed become (`skip`: nothing; `once`: the
    latest one enqueued; `all`: each one enqueued, as a backfill)."""

    missed: Missed = "skip"


class BackfillBody(Request):
    """Backfill [from, to) (ISO 8601; naive: the row's zone); `dry_run` only lists."""

    start: Annotated[str, Field(max_length=64)] = Field(alias="from")
    end: Annotated[str, Field(max_length=64)] = Field(alias="to")
    dry_run: StrictBool = False
    allow_overlap: StrictBool = False


class BackfillOut(Response):
    """What a backfill enqueued (or would, on a dry run), by occurrence."""

    schedule: str
    start: datetime
    end: datetime
    dry_run: bool
    occurrences: list[datetime]
    enqueued: list[datetime]
    already_fired: list[datetime]
    left_to_dispatcher: list[datetime]
    item_ids: list[UUID]


class Preview(Response):
    """An expression explained: normalized, described, and its next occurrences."""

    expression: str
    normalized: str
    description: str
    timezone: str
    next: list[datetime]
    notes: list[str] = Field(
        default_factory=list,
        description="What the DST transitions of the next year do to it, with the policy.",
    )


# -- events ----------------------------------------------------------------------


class EventOut(Response):
    """One audit row: a change with its actor, or an occurrence's outcome."""

    id: int
    code: str
    tenant: str
    stack: str | None
    environment: str | None
    schedule_id: UUID | None
    schedule_name: str | None
    item_id: UUID | None
    actor: str
    message: str
    scheduled_for: datetime | None
    fired_at: datetime | None
    created_at: datetime
    detail: dict[str, Any]

    @field_validator("message", "detail")
    @classmethod
    def _masked(cls, value: Any) -> Any:
        return redact.redact_value(value)  # an error text may quote a URL


class EventPage(Response):
    """Events newest first; pass `next_before` as `before` for older ones (null: no more)."""

    items: list[EventOut]
    next_before: int | None


# -- jobs ------------------------------------------------------------------------


class JobCreate(Request):
    """A job to register in (tenant, stack)."""

    name: NameText
    target: TargetText
    stack: NameText = "default"
    title: TitleText = ""
    kind: NameText | None = None
    payload: JSONObject = Field(default_factory=dict)
    payload_schema: JSONObject | None = None
    options: JSONObject = Field(default_factory=dict)
    status: Literal["active", "inactive"] = "active"
    labels: LabelMap = Field(default_factory=dict)


class JobPatchBody(Request):
    """Job fields to change; absent fields are left alone (`payload_schema: null` clears it)."""

    title: TitleText | None = None
    target: TargetText | None = None
    kind: NameText | None = None
    payload: JSONObject | None = None
    payload_schema: JSONObject | None = None
    options: JSONObject | None = None
    status: Literal["active", "inactive"] | None = None
    labels: LabelMap | None = None  # the whole map ({} removes every label)


class JobOut(Response):
    """One job definition (SPEC §4)."""

    id: UUID
    tenant: str
    stack: str
    name: str
    title: str
    kind: str
    status: Literal["active", "inactive"]
    payload: dict[str, Any]
    payload_schema: dict[str, Any] | None
    target: str
    options: dict[str, Any]
    source: Literal["app", "user", "system"]
    labels: dict[str, str]
    created_at: datetime
    updated_at: datetime
    revision: int

    @field_validator("options")
    @classmethod
    def _redacted(cls, options: dict[str, Any]) -> dict[str, Any]:
        # Every route that answers a job goes through here: no secret leaves, sealed or not.
        return validation.public_options(options)

    @field_validator("target")
    @classmethod
    def _masked(cls, target: str) -> str:
        return redact.redact_text(target)  # `webhook:https://user:pass@…?token=…`


class JobList(Response):
    """Jobs by stack and name."""

    items: list[JobOut]


# -- queue -------------------------------------------------------------------------


class QueueItemOut(Response):
    """One unit of work on the queue (SPEC §7)."""

    id: UUID
    tenant: str
    stack: str
    environment: str
    job: str
    payload: dict[str, Any]
    source: str
    schedule_id: UUID | None
    scheduled_for: datetime | None
    priority: int
    status: Literal["queued", "running", "succeeded", "failed", "expired", "cancelled"]
    available_at: datetime
    expires_at: datetime | None
    attempts: int
    max_attempts: int
    lease_owner: str | None
    heartbeat_at: datetime | None
    lease_expires_at: datetime | None
    result: Any
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    updated_at: datetime
    timeout: int | None = None
    max_concurrency: int | None = None
    exclusive: bool = False
    cancel_requested_at: datetime | None = None
    cancelled_by: str | None = None

    @field_validator("error", "result")
    @classmethod
    def _masked(cls, value: Any) -> Any:
        return redact.redact_value(value)  # an error text or result may quote a URL


class QueueItemList(Response):
    """Queue items newest first (at most `limit`)."""

    items: list[QueueItemOut]


# -- cron and identity -----------------------------------------------------------


class ExplainBody(Request):
    """An expression to explain, as an editor types it."""

    expression: CronText
    timezone: ZoneText = "UTC"
    count: Annotated[int, Field(ge=1, le=100)] = 5
    after: datetime | None = Field(None, description="Start (exclusive); default now.")
    seed: Annotated[str, Field(min_length=1, max_length=MAX_NAME)] | None = Field(
        None, description="Schedule identity resolving `H` fields (tenant/stack/env/name)."
    )
    dst_gap: Gap = Field("shift", description="The DST policy to try (as a schedule's).")
    dst_repeat: Repeat | None = None


class WhoAmI(Response):
    """The caller's credential: tenant (null: platform), role and what it grants."""

    tenant: str | None
    role: str
    name: str
    permissions: list[str]


class Health(Response):
    """Liveness or readiness."""

    status: Literal["ok", "unavailable"]
    checks: dict[str, str]


# -- run now (the `cli` change of issue 14; kept apart from the other models) ------


class RunBody(Request):
    """`POST …/run`'s optional body: a payload for this run only."""

    payload: JSONObject | None = Field(
        None, description="Replaces the schedule's payload for this run; checked like one."
    )
