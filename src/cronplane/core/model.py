"""The product's values: scopes, schedules, jobs, the service's inputs, the sync plan.

Everything here is a frozen dataclass or a pure function of values. The store
maps rows to these (`cronplane.store.schedules.schedule_from_row`,
`cronplane.store.jobs.job_from_row`); the service takes and returns them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

Source = Literal["app", "user", "system"]
Overlap = Literal["skip", "allow"]
JobStatus = Literal["active", "inactive"]

SOURCES: Final = ("app", "user", "system")
OVERLAPS: Final = ("skip", "allow")
DEFAULT_ZONE: Final = "UTC"
DEFAULT_SCOPE_PART: Final = "default"

# The fields of an `app` row an operator may change (SPEC §2). All but
# `enabled` are remembered as overrides: sync never touches `enabled`, so an
# operator's enable/disable needs no protection from it.
OPERATOR_FIELDS: Final = ("cron", "timezone", "payload", "misfire_grace", "enabled")
OVERRIDABLE_FIELDS: Final = ("cron", "timezone", "payload", "misfire_grace")
# What a manifest declares for one cron; `declared` stores exactly these keys.
DECLARED_FIELDS: Final = ("job", "cron", "timezone", "payload", "misfire_grace", "overlap")


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

    @property
    def scope(self) -> Scope:
        """The schedule's (tenant, stack, environment)."""
        return Scope(self.tenant, self.stack, self.environment)

    @property
    def identity(self) -> str:
        """`tenant/stack/environment/name`: the seed of its `H` fields."""
        return self.scope.identity(self.name)

    def to_dict(self) -> dict[str, Any]:
        """The row keyed by SPEC §2 column names, JSON-ready (ISO datetimes, str ids)."""
        return {
            "id": str(self.id),
            "tenant": self.tenant,
            "stack": self.stack,
            "environment": self.environment,
            "name": self.name,
            "job": self.job,
            "cron": self.cron,
            "timezone": self.timezone,
            "payload": self.payload,
            "enabled": self.enabled,
            "source": self.source,
            "misfire_grace": self.misfire_grace,
            "overlap": self.overlap,
            "last_run": _iso(self.last_run),
            "next_run": _iso(self.next_run),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "revision": self.revision,
            "declared": self.declared,
            "overrides": list(self.overrides),
        }


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
        """The row keyed by column names, JSON-ready."""
        return {
            "id": str(self.id),
            "tenant": self.tenant,
            "stack": self.stack,
            "name": self.name,
            "title": self.title,
            "kind": self.kind,
            "status": self.status,
            "payload": self.payload,
            "payload_schema": self.payload_schema,
            "target": self.target,
            "options": self.options,
            "source": self.source,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "revision": self.revision,
        }


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
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class SchedulePatch:
    """A partial update; UNSET fields are left alone (None is a value for misfire_grace)."""

    job: str | Unset = UNSET
    cron: str | Unset = UNSET
    timezone: str | Unset = UNSET
    payload: dict[str, Any] | Unset = UNSET
    misfire_grace: int | Unset | None = UNSET
    overlap: Overlap | Unset = UNSET
    enabled: bool | Unset = UNSET

    def given(self) -> dict[str, Any]:
        """The fields this patch sets, by name."""
        values = {
            "job": self.job,
            "cron": self.cron,
            "timezone": self.timezone,
            "payload": self.payload,
            "misfire_grace": self.misfire_grace,
            "overlap": self.overlap,
            "enabled": self.enabled,
        }
        return {key: value for key, value in values.items() if value is not UNSET}


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
        values = {
            "title": self.title,
            "target": self.target,
            "kind": self.kind,
            "payload": self.payload,
            "payload_schema": self.payload_schema,
            "options": self.options,
            "status": self.status,
        }
        return {key: value for key, value in values.items() if value is not UNSET}


@dataclass(frozen=True, slots=True)
class CronDeclaration:
    """One cron as an app manifest declares it (SPEC §5), before resolution.

    `job` defaults to the cron's name; `payload` None means the job's default.
    """

    cron: str
    job: str | None = None
    timezone: str = DEFAULT_ZONE
    payload: dict[str, Any] | None = None
    misfire_grace: int | None = None
    overlap: Overlap = "skip"


@dataclass(frozen=True, slots=True)
class Declared:
    """A declaration resolved against its scope: normalized cron, concrete payload.

    This is what the sync planner compares with a row's `declared` column.
    """

    job: str
    cron: str
    timezone: str
    payload: dict[str, Any]
    misfire_grace: int | None
    overlap: Overlap

    def to_dict(self) -> dict[str, Any]:
        """The `declared` column's document."""
        return {
            "job": self.job,
            "cron": self.cron,
            "timezone": self.timezone,
            "payload": self.payload,
            "misfire_grace": self.misfire_grace,
            "overlap": self.overlap,
        }


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a keyset-paged listing; `next_cursor` None on the last page."""

    items: tuple[Schedule, ...]
    next_cursor: str | None


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
