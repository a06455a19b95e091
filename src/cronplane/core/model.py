"""The product's records: scopes, schedules, jobs, queue items, API tokens, pages (the
service's inputs and what a manifest declares are `core.inputs`).

Everything here is a frozen dataclass or a pure function of values. The store
maps rows to these (`cronplane.store.schedules.schedule_from_row`,
`cronplane.store.jobs.job_from_row`, ...); the service takes and returns them;
`to_dict()` is `core.codec.to_document`, derived from the fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from cronplane.core.choices import (
    JobStatus,
    Source,
)
from cronplane.core.codec import to_document
from cronplane.core.fields import Settings
from cronplane.core.inputs import Declared, to_fields
from cronplane.core.redact import redact_text, redact_value

DEFAULT_SCOPE_PART: Final = "default"

# Which fields an operator may change on an app row, and which are remembered as
# overrides: core.fields' table.
# An operator's pause (docs/controls.md): never declared by a manifest, never
# touched by sync (like `enabled`); the fire path clears it on auto-resume.
PAUSE_FIELDS: Final = ("paused_at", "paused_until", "paused_note", "paused_by", "paused_missed")

ScheduleState = Literal["active", "inactive", "paused", "ended", "done"]


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
class Schedule(Settings):
    """One row of `schedules` (SPEC §2), every column: its own here, then the
    settings every schedule record shares (`core.fields.Settings`)."""

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
    last_run: datetime | None
    next_run: datetime | None
    created_at: datetime
    updated_at: datetime
    revision: int
    declared: dict[str, Any] | None
    overrides: tuple[str, ...]
    # The offset `jitter` applies to the current next_run: next_run = nominal
    # occurrence + jitter_offset.
    jitter_offset: int = 0
    paused_at: datetime | None = None
    paused_until: datetime | None = None
    paused_note: str | None = None
    paused_by: str | None = None
    # What a pause that ends by itself (at `paused_until`) does with what it passed:
    # skip, once or all (core.controls.MISSED); None when not given (skip).
    paused_missed: str | None = None
    # The row's schedule fires (the fire transaction's): `max_runs` ends it.
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
    labels: dict[str, str] = field(default_factory=dict)  # core.labels (migration 0022)

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
