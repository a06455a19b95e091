"""The product's values: scopes, schedules, jobs, queue items, API tokens, the
service's inputs and what a manifest declares.

Everything here is a frozen dataclass or a pure function of values. The store
maps rows to these (`cronplane.store.schedules.schedule_from_row`,
`cronplane.store.jobs.job_from_row`, ...); the service takes and returns them;
`to_dict()` is `core.codec.to_document`, derived from the fields.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from cronplane.core.choices import (
    DEFAULT_ZONE,
    JobStatus,
    Overlap,
    Source,
)
from cronplane.core.codec import field_names, to_document
from cronplane.core.fields import declared_document
from cronplane.core.redact import redact_text, redact_value

DEFAULT_SCOPE_PART: Final = "default"

# Which fields an operator may change on an app row, and which are remembered as
# overrides: core.fields' table.
# An operator's pause (docs/controls.md): never declared by a manifest, never
# touched by sync (like `enabled`); the fire path clears it on auto-resume.
PAUSE_FIELDS: Final = ("paused_at", "paused_until", "paused_note", "paused_by")

ScheduleState = Literal["active", "inactive", "paused", "ended", "done"]


class Unset(enum.Enum):
    """Marks a patch field as "leave as is" (None can be a real value)."""

    UNSET = "UNSET"


UNSET: Final = Unset.UNSET


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a schedule lives: tenant, installed stack, deployed environment."""

    tenant: str
    stack: str = DEFAULT_SCOPE_PART
    environment: str = DEFAULT_SCOPE_PART

    def identity(self, name: str) -> str:
        """The stable identity of a schedule, used as the seed of its `H` fields."""
        return f"{self.tenant}/{self.stack}/{self.environment}/{name}"


@dataclass(frozen=True, slots=True)
class Schedule:
    """One row of `schedules` (SPEC §2), every column."""

    id: UUID
    tenant: str
    stack: str
    environment: str
    name: str
    job: str
    cron: str
    timezone: str
    payload: dict[str, Any]
    enabled: bool
    source: Source
    misfire_grace: int | None
    overlap: Overlap
    last_run: datetime | None
    next_run: datetime | None
    created_at: datetime
    updated_at: datetime
    revision: int
    declared: dict[str, Any] | None
    overrides: tuple[str, ...]
    # Seconds of spread (< the cron's shortest gap), and the offset applied to
    # the current next_run: next_run = nominal occurrence + jitter_offset.
    jitter: int | None = None
    jitter_offset: int = 0
    paused_at: datetime | None = None
    paused_until: datetime | None = None
    paused_note: str | None = None
    paused_by: str | None = None
    # Seconds an item of this schedule may run; None: the job's `timeout` option.
    timeout: int | None = None
    # The active window (no fire before start_at or after end_at) and the run
    # limit; run_count counts the row's schedule fires (the fire transaction's).
    start_at: datetime | None = None
    end_at: datetime | None = None
    max_runs: int | None = None
    run_count: int = 0

    @property
    def paused(self) -> bool:
        """True while an operator's pause holds (see docs/controls.md)."""
        return self.paused_at is not None

    @property
    def scope(self) -> Scope:
        """The schedule's (tenant, stack, environment)."""
        return Scope(self.tenant, self.stack, self.environment)

    @property
    def one_off(self) -> bool:
        """True for a one-off (`@once …`), which is `done` rather than `ended`."""
        return self.cron.startswith("@once ")

    @property
    def runs_left(self) -> int | None:
        """Fires left before max_runs ends the row (Temporal's "remaining actions"); None: no limit."""
        return None if self.max_runs is None else max(self.max_runs - self.run_count, 0)

    @property
    def state(self) -> ScheduleState:
        """Derived, read-only: the first of STATE_RULES that holds, else `active`."""
        return next((name for name, holds in STATE_RULES if holds(self)), "active")

    @property
    def identity(self) -> str:
        """`tenant/stack/environment/name`: the seed of its `H` fields."""
        return self.scope.identity(self.name)

    def to_dict(self) -> dict[str, Any]:
        """The row keyed by SPEC §2 column names, JSON-ready (ISO datetimes, str ids),
        with the derived `state` and `runs_left` (read-only; decoding ignores them)."""
        return {**to_document(self), "state": self.state, "runs_left": self.runs_left}


# A schedule's state, first match wins (a new state is one line here). An
# enabled row with no next run has no occurrence left: a one-off is `done`,
# any other row `ended` (window over or runs used up); neither is deleted.
STATE_RULES: Final[tuple[tuple[ScheduleState, Callable[[Schedule], bool]], ...]] = (
    ("inactive", lambda row: not row.enabled),
    ("done", lambda row: row.next_run is None and row.one_off),
    ("ended", lambda row: row.next_run is None),
    ("paused", lambda row: row.paused),
)
STATES: Final = ("active", "inactive", "paused", "ended", "done")


@dataclass(frozen=True, slots=True)
class Job:
    """One row of `jobs` (SPEC §4): what the queue knows by name, and who runs it."""

    id: UUID
    tenant: str
    stack: str
    name: str
    title: str
    kind: str
    status: JobStatus
    payload: dict[str, Any]
    payload_schema: dict[str, Any] | None
    target: str
    options: dict[str, Any]
    source: Source
    created_at: datetime
    updated_at: datetime
    revision: int

    @property
    def active(self) -> bool:
        """True when schedules may be created for it and fires enqueue it."""
        return self.status == "active"

    def to_dict(self) -> dict[str, Any]:
        """The row keyed by column names, JSON-ready; credentials in the URL masked."""
        return {**to_document(self), "target": redact_text(self.target)}


ACTIVE: Final = ("queued", "running")
FINISHED: Final = ("succeeded", "failed", "expired", "cancelled")


@dataclass(frozen=True, slots=True)
class QueueItem:
    """One unit of work as read back from the queue."""

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
    status: str
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
    # Seconds the item may run (the schedule's `timeout`, else the job's); None: no limit.
    timeout: float | None = None
    # The job's `max_concurrency` when the item was enqueued; None: no limit.
    max_concurrency: int | None = None
    # Not started while another item of its schedule runs (overlap other than `allow`).
    exclusive: bool = False
    # A running item asked to stop: when, and by whom (its worker then stops it).
    cancel_requested_at: datetime | None = None
    cancelled_by: str | None = None

    @property
    def finished(self) -> bool:
        """True once the item reached a final status."""
        return self.status in FINISHED

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view (CLI `--json`, API); credentials in URLs masked."""
        document = to_document(self)
        document["error"] = None if self.error is None else redact_text(self.error)
        document["result"] = redact_value(document["result"])
        return document


@dataclass(frozen=True, slots=True)
class ApiToken:
    """One row of `api_tokens` (never the secret; `prefix` identifies it to people)."""

    id: UUID
    tenant: str | None  # None: a platform token spanning tenants
    role: str
    name: str
    prefix: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        """True until revoked."""
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for `token ls --json`."""
        return to_document(self)


# -- inputs ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """What an operator gives to create a schedule; `name` defaults to the job's."""

    job: str
    cron: str
    name: str | None = None
    timezone: str = DEFAULT_ZONE
    payload: dict[str, Any] | None = None  # None: the job's default payload
    misfire_grace: int | None = None
    overlap: Overlap = "skip"
    timeout: int | None = None
    enabled: bool = True
    jitter: int | None = None
    # Naive datetimes are wall times in `timezone`.
    start_at: datetime | None = None
    end_at: datetime | None = None
    max_runs: int | None = None


@dataclass(frozen=True, slots=True)
class SchedulePatch:
    """A partial update; UNSET fields are left alone (None is a value for misfire_grace)."""

    job: str | Unset = UNSET
    cron: str | Unset = UNSET
    timezone: str | Unset = UNSET
    payload: dict[str, Any] | Unset = UNSET
    misfire_grace: int | Unset | None = UNSET
    overlap: Overlap | Unset = UNSET
    timeout: int | Unset | None = UNSET
    enabled: bool | Unset = UNSET
    jitter: int | Unset | None = UNSET
    start_at: datetime | Unset | None = UNSET
    end_at: datetime | Unset | None = UNSET
    max_runs: int | Unset | None = UNSET

    def given(self) -> dict[str, Any]:
        """The fields this patch sets, by name."""
        return _set_fields(self)


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What registering a job takes (SPEC §4); `kind` defaults to the target's scheme."""

    name: str
    target: str
    title: str = ""
    kind: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    payload_schema: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    status: JobStatus = "active"


@dataclass(frozen=True, slots=True)
class JobPatch:
    """A partial job update; UNSET fields are left alone."""

    title: str | Unset = UNSET
    target: str | Unset = UNSET
    kind: str | Unset = UNSET
    payload: dict[str, Any] | Unset = UNSET
    payload_schema: dict[str, Any] | Unset | None = UNSET
    options: dict[str, Any] | Unset = UNSET
    status: JobStatus | Unset = UNSET

    def given(self) -> dict[str, Any]:
        """The fields this patch sets, by name."""
        return _set_fields(self)


@dataclass(frozen=True, slots=True)
class CronDeclaration:
    """One cron as an app manifest declares it (SPEC §5), before resolution.

    `job` defaults to the cron's name; `payload` None means the job's default.
    `enabled` is only the state a row is *created* in (an import of a paused
    entry); sync never changes `enabled` afterwards, it belongs to operators.
    """

    cron: str
    job: str | None = None
    timezone: str = DEFAULT_ZONE
    payload: dict[str, Any] | None = None
    misfire_grace: int | None = None
    overlap: Overlap = "skip"
    enabled: bool = True
    jitter: int | None = None
    timeout: int | None = None
    start_at: datetime | None = None  # naive: a wall time in `timezone`
    end_at: datetime | None = None
    max_runs: int | None = None


@dataclass(frozen=True, slots=True)
class Declared:
    """A declaration resolved against its scope: normalized cron, concrete payload.

    This is what the sync planner compares with a row's `declared` column, and
    what a new row is defined by (`new_schedule`).
    """

    job: str
    cron: str
    timezone: str
    payload: dict[str, Any]
    misfire_grace: int | None = None
    overlap: Overlap = "skip"
    jitter: int | None = None
    timeout: int | None = None
    start_at: datetime | None = None  # aware
    end_at: datetime | None = None
    max_runs: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `declared` column's document; a field added after rows existed only when
        not at its default, so older rows' documents stay equal (no re-sync churn)."""
        return declared_document(to_document(self))


# What a manifest declares for one cron; `declared` stores these keys (core.fields:
# those added after rows existed only when not at their default).
DECLARED_FIELDS: Final = field_names(Declared)


def new_schedule(
    scope: Scope,
    name: str,
    definition: Declared,
    *,
    schedule_id: UUID,
    source: Source,
    now: datetime,
    next_run: datetime | None,
    enabled: bool = True,
    declared: dict[str, Any] | None = None,
    jitter_offset: int = 0,
) -> Schedule:
    """A row created at `now`: revision 1, `last_run` now (nothing before it is owed)."""
    return Schedule(
        id=schedule_id,
        tenant=scope.tenant,
        stack=scope.stack,
        environment=scope.environment,
        name=name,
        enabled=enabled,
        source=source,
        last_run=now,
        next_run=next_run,
        created_at=now,
        updated_at=now,
        revision=1,
        declared=declared,
        overrides=(),
        jitter_offset=jitter_offset,
        **to_fields(definition),
    )


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a keyset-paged listing; `next_cursor` None on the last page."""

    items: tuple[Schedule, ...]
    next_cursor: str | None


def _set_fields(patch: object) -> dict[str, Any]:
    """The fields of a patch that are not UNSET, by name."""
    values = to_fields(patch)
    return {key: value for key, value in values.items() if value is not UNSET}


def to_fields(record: object) -> dict[str, Any]:
    """A record's field values by name, as they are (a shallow `asdict`)."""
    return {item.name: getattr(record, item.name) for item in fields(record)}  # type: ignore[arg-type]
