"""Schedule versions (issue 38): what a version holds, and the field-wise diff of two.

A version is the whole definition of a schedule after one change, as a JSON
document keyed by field name: every field of core.fields' table (so a new
field is versioned with no line here), `enabled`, the pause, and the row's
`source` and `overrides` (an app row's rollback becomes an override).
`ROLLBACK_FIELDS` are the ones a rollback restores: the table's and `enabled`;
a pause is an operator's hold with its own commands, never rolled back.

Who made it, when and how is a `Change`: the store writes one version per
row a definition change writes, in the same statement group (store.versions).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from cronplane.core.codec import encode_value
from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.model import PAUSE_FIELDS, Schedule

# How a change was made: an edge (api, cli, console), an app sync, an import, a
# rollback or restore, a promote from another environment, or the system (housekeeping's own schedules; a service
# called in-process names none).
Via = Literal[
    "api", "cli", "console", "sync", "import", "rollback", "restore", "promote", "system",
    "service",
]  # fmt: skip
VIAS: Final = (
    "api",
    "cli",
    "console",
    "sync",
    "import",
    "rollback",
    "restore",
    "promote",
    "system",
    "service",
)

ROLLBACK_FIELDS: Final = (*(f.name for f in SCHEDULE_FIELDS), "enabled")
DEFINITION_FIELDS: Final = (*ROLLBACK_FIELDS, *PAUSE_FIELDS, "source", "overrides")
# Fields held as ISO text in a definition, read back as datetimes.
INSTANT_FIELDS: Final = frozenset(
    (*(f.name for f in SCHEDULE_FIELDS if f.kind == "instant"), "paused_at", "paused_until")
)
# The default retention (CRONPLANE_VERSION_RETENTION, days) and the versions of a row
# never pruned, however old.
DEFAULT_RETENTION_DAYS: Final = 400
KEEP_LAST: Final = 20


@dataclass(frozen=True, slots=True)
class Change:
    """Who made a definition change, when and how; `digest` and `app_version` for a sync."""

    actor: str
    via: Via
    at: datetime
    reason: str | None = None
    digest: str | None = None
    app_version: str | None = None


@dataclass(frozen=True, slots=True)
class Version:
    """One immutable version of a schedule (a row of `schedule_versions`)."""

    schedule_id: UUID
    tenant: str
    stack: str
    environment: str
    name: str
    number: int
    definition: dict[str, Any]
    actor: str
    via: str
    at: datetime
    reason: str | None = None
    digest: str | None = None
    app_version: str | None = None
    # The row was deleted by this change (its definition is the last it had).
    removed: bool = False


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs between two versions (JSON values)."""

    field: str
    before: Any
    after: Any


def compared(latest: int, first: int | None, second: int | None) -> tuple[int, int]:
    """Which two versions a diff compares: `first` against `second`, by default the
    previous against the current (`latest`; version 1 against itself when it is the
    only one)."""
    after = latest if second is None else second
    return (max(after - 1, 1) if first is None else first), after


def definition_of(schedule: Schedule) -> dict[str, Any]:
    """The version document of a row: DEFINITION_FIELDS, JSON-ready."""
    return {name: encode_value(getattr(schedule, name)) for name in DEFINITION_FIELDS}


def decoded(
    definition: Mapping[str, Any], names: tuple[str, ...] = ROLLBACK_FIELDS
) -> dict[str, Any]:
    """The fields `names` of a definition as a row holds them (datetimes, not text).
    A field added after the version was made is left out (the row keeps its value)."""
    values: dict[str, Any] = {}
    for name in names:
        if name not in definition:
            continue
        value = definition[name]
        if name in INSTANT_FIELDS and value is not None:
            value = datetime.fromisoformat(value)
        values[name] = value
    return values


def diff(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    order: tuple[str, ...] = DEFINITION_FIELDS,
) -> list[FieldChange]:
    """The fields whose values differ, in `order` (a schedule's DEFINITION_FIELDS by
    default; a job's core.job_versions.JOB_DEFINITION_FIELDS), then any others."""
    names = [*order, *sorted((set(before) | set(after)) - set(order))]
    return [
        FieldChange(name, before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name)
    ]


def manifest_digest(documents: Mapping[str, Any]) -> str:
    """A short digest of what a sync applied (its declarations, canonical JSON)."""
    text = json.dumps(documents, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
