"""A manifest's defaults and the `declared` document, read off the field table (core.fields).

The `declared` column keeps a manifest's declaration; a field added after
rows existed is left out at its default, so an older row's document stays
equal and sync writes nothing (docs/architecture.md, "adding a schedule field").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cronplane.core.codec import encode_value
from cronplane.core.fields import BY_NAME, SCHEDULE_FIELDS
from cronplane.core.schedule_field import ScheduleField


def manifest_defaults(table: Iterable[ScheduleField] = SCHEDULE_FIELDS) -> dict[str, Any]:
    """What an omitted key of a manifest's cron means (`job` omitted: the cron's name;
    `payload` omitted: the job's default payload), a fresh object for a mutable one."""
    return {f.name: f.default_value() for f in table}


def declared_document(
    document: Mapping[str, Any], table: Iterable[ScheduleField] = SCHEDULE_FIELDS
) -> dict[str, Any]:
    """A `declared` document without the fields added after rows existed that are at their
    default: an older row's document stays equal, so sync writes nothing."""
    left_out = {
        f.name
        for f in table
        if f.since and f.name in document and document[f.name] == encode_value(f.default_value())
    }
    return {key: value for key, value in document.items() if key not in left_out}


def declared_value(
    document: Mapping[str, Any], key: str, table: Mapping[str, ScheduleField] = BY_NAME
) -> Any:
    """A field's value in a `declared` document, its default when the document leaves
    it out (as `declared_document` does), in the document's encoding."""
    if key in document:
        return document[key]
    field = table.get(key)
    return None if field is None else encode_value(field.default_value())
