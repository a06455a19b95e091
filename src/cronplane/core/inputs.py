"""The service's inputs and what a manifest declares: a schedule to create or change
(`ScheduleSpec`, `SchedulePatch`), a job (`JobSpec`, `JobPatch`), a manifest's cron
(`CronDeclaration`) and the declaration resolved (`Declared`).

Frozen dataclasses; a patch marks the fields it leaves alone with `UNSET`. Their
fields and defaults agree with the field table (`core.fields`,
tests/core/test_fields.py). The records they make are `core.model`'s.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Final

from cronplane.core.choices import DEFAULT_ZONE, JobStatus, Overlap
from cronplane.core.codec import field_names, to_document
from cronplane.core.declared import declared_document
from cronplane.core.dst import DstPolicy, Gap, Repeat


class Unset(enum.Enum):
    """Marks a patch field as "leave as is" (None can be a real value)."""

    UNSET = "UNSET"


UNSET: Final = Unset.UNSET


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
    dst_gap: Gap = "shift"
    dst_repeat: Repeat | None = None
    labels: dict[str, str] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    on_excluded: str = "skip"


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
    dst_gap: Gap | Unset = UNSET
    dst_repeat: Repeat | Unset | None = UNSET
    labels: dict[str, str] | Unset = UNSET
    exclude: list[str] | Unset = UNSET
    on_excluded: str | Unset = UNSET

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
    labels: dict[str, str] = field(default_factory=dict)  # core.labels' rules


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
    labels: dict[str, str] | Unset = UNSET

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
    dst_gap: Gap = "shift"
    dst_repeat: Repeat | None = None
    labels: dict[str, str] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    on_excluded: str = "skip"


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
    dst_gap: Gap = "shift"
    dst_repeat: Repeat | None = None
    labels: dict[str, str] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    on_excluded: str = "skip"

    @property
    def dst(self) -> DstPolicy:
        """Its DST policy."""
        return DstPolicy(self.dst_gap, self.dst_repeat)

    def to_dict(self) -> dict[str, Any]:
        """The `declared` column's document; a field added after rows existed only when
        not at its default, so older rows' documents stay equal (no re-sync churn)."""
        return declared_document(to_document(self))


# What a manifest declares for one cron; `declared` stores these keys (core.fields:
# those added after rows existed only when not at their default).
DECLARED_FIELDS: Final = field_names(Declared)


def _set_fields(patch: object) -> dict[str, Any]:
    """The fields of a patch that are not UNSET, by name."""
    values = to_fields(patch)
    return {key: value for key, value in values.items() if value is not UNSET}


def to_fields(record: object) -> dict[str, Any]:
    """A record's field values by name, as they are (a shallow `asdict`)."""
    return {item.name: getattr(record, item.name) for item in fields(record)}  # type: ignore[arg-type]
