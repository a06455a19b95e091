"""Job versions (issue 38): what a version of a job holds.

A job's version is its whole definition after one change, as a JSON document
keyed by field name: the fields a job patch may set (core.inputs.JobPatch:
title, target, kind, payload, payload_schema, options, status, labels — a
new patch field is versioned with no line here) and its `source`.
`JOB_ROLLBACK_FIELDS` are the ones a rollback restores: the patch's (the
source is who owns the job, never rolled back). Who made it, when and how
is the same `Change` as a schedule's (core.versions), and the diff is the
same field-wise diff in this module's field order.

The target may carry credentials in its URL and the options a webhook's
sealed `secret`: a version is read through `shown`, which masks both as the
API's job answers do; the store keeps the real ones so a rollback restores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final
from uuid import UUID

from cronplane.core.codec import encode_value, field_names
from cronplane.core.inputs import JobPatch
from cronplane.core.model import Job
from cronplane.core.redact import redact_text
from cronplane.core.validation import public_options
from cronplane.core.versions import FieldChange, diff

JOB_ROLLBACK_FIELDS: Final = field_names(JobPatch)
JOB_DEFINITION_FIELDS: Final = (*JOB_ROLLBACK_FIELDS, "source")


@dataclass(frozen=True, slots=True)
class JobVersion:
    """One immutable version of a job (a row of `job_versions`)."""

    job_id: UUID
    tenant: str
    stack: str
    name: str
    number: int
    definition: dict[str, Any]
    actor: str
    via: str
    at: datetime
    reason: str | None = None
    digest: str | None = None
    app_version: str | None = None


def job_definition_of(job: Job) -> dict[str, Any]:
    """The version document of a job: JOB_DEFINITION_FIELDS, JSON-ready."""
    return {name: encode_value(getattr(job, name)) for name in JOB_DEFINITION_FIELDS}


def job_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[FieldChange]:
    """The fields of two job definitions whose values differ, in JOB_DEFINITION_FIELDS order."""
    return diff(before, after, JOB_DEFINITION_FIELDS)


def rollback_values(job: Job, version: JobVersion) -> dict[str, Any]:
    """The rollback fields whose value in `version` differs from the job's (a field
    added after the version was made is left out: the job keeps its value)."""
    current = job_definition_of(job)
    given = {
        name: version.definition[name]
        for name in JOB_ROLLBACK_FIELDS
        if name in version.definition and current.get(name) != version.definition[name]
    }
    # An edit of the target alone resets the kind to its scheme: the version's kind goes too.
    if "target" in given and "kind" in version.definition:
        given["kind"] = version.definition["kind"]
    return given


def shown(version: JobVersion) -> JobVersion:
    """The version as people and programs read it: its target's URL credentials and its
    options' `secret` masked (as the API's job answers are)."""
    definition = {name: public_value(name, value) for name, value in version.definition.items()}
    return version if definition == version.definition else replace(version, definition=definition)


def shown_changes(changes: list[FieldChange]) -> tuple[FieldChange, ...]:
    """Changes as people read them: masked on both sides as `shown` masks a version."""
    return tuple(
        FieldChange(c.field, public_value(c.field, c.before), public_value(c.field, c.after))
        for c in changes
    )


def public_value(name: str, value: Any) -> Any:
    """One field of a job's definition as any reader may see it."""
    if name == "target" and isinstance(value, str):
        return redact_text(value)
    if name == "options" and isinstance(value, dict):
        return public_options(value)
    return value
