"""The service's inputs and what a manifest declares: a schedule to create or change
(`ScheduleSpec`, `SchedulePatch`), a job (`JobSpec`, `JobPatch`), a manifest's cron
(`CronDeclaration`) and the declaration resolved (`Declared`).

Frozen dataclasses; a job patch marks the fields it leaves alone with `UNSET`, a
schedule patch holds only the fields it sets. The schedule inputs read their
fields off the field table (`core.fields`): they inherit its typed `Settings`,
and a patch takes the table's names. The records they make are `core.model`'s.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Final

from cronplane.core.choices import DEFAULT_ZONE, JobStatus
from cronplane.core.codec import to_document
from cronplane.core.declared import declared_document
from cronplane.core.fields import BY_NAME, Settings


class Unset(enum.Enum):
    """Marks a patch field as "leave as is" (None can be a real value)."""

    UNSET = "UNSET"


UNSET: Final = Unset.UNSET


@dataclass(frozen=True, slots=True)
class ScheduleSpec(Settings):
    """What an operator gives to create a schedule; `name` defaults to the job's.
    Naive datetimes are wall times in `timezone`."""

    job: str
    cron: str
    name: str | None = None
    timezone: str = DEFAULT_ZONE
    payload: dict[str, Any] | None = None  # None: the job's default payload
    enabled: bool = True


@dataclass(frozen=True, slots=True, init=False)
class SchedulePatch:
    """A partial update: the schedule fields it sets (`core.fields`' names), by name.
    Fields not given, or given as UNSET, are left alone; None is a value (it clears
    a nullable field). A name the table does not have is a TypeError."""

    changes: Mapping[str, Any]

    def __init__(self, **changes: Any) -> None:
        unknown = sorted(set(changes) - BY_NAME.keys())
        if unknown:
            raise TypeError(f"SchedulePatch has no field {', '.join(unknown)}")
        given = {name: value for name, value in changes.items() if value is not UNSET}
        object.__setattr__(self, "changes", MappingProxyType(given))

    def given(self) -> dict[str, Any]:
        """The fields this patch sets, by name."""
        return dict(self.changes)


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
class CronDeclaration(Settings):
    """One cron as an app manifest declares it (SPEC §5), before resolution.

    `job` defaults to the cron's name; `payload` None means the job's default.
    `enabled` is only the state a row is *created* in (an import of a paused
    entry); sync never changes `enabled` afterwards, it belongs to operators.
    """

    cron: str
    job: str | None = None
    timezone: str = DEFAULT_ZONE
    payload: dict[str, Any] | None = None
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class Declared(Settings):
    """A declaration resolved against its scope: normalized cron, concrete payload.

    This is what the sync planner compares with a row's `declared` column, and
    what a new row is defined by (`new_schedule`).
    """

    job: str
    cron: str
    timezone: str
    payload: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The `declared` column's document; a field added after rows existed only when
        not at its default, so older rows' documents stay equal (no re-sync churn)."""
        return declared_document(to_document(self))


def _set_fields(patch: object) -> dict[str, Any]:
    """The fields of a patch that are not UNSET, by name."""
    values = to_fields(patch)
    return {key: value for key, value in values.items() if value is not UNSET}


def to_fields(record: object) -> dict[str, Any]:
    """A record's field values by name, as they are (a shallow `asdict`)."""
    return {item.name: getattr(record, item.name) for item in fields(record)}  # type: ignore[arg-type]
