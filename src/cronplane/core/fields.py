"""The schedule's fields in one table: what each is, its default, who may set it, its check.

Every layer that lists a schedule's settable fields reads this table instead
of a list of its own: the operator's and the manifest's field sets
(`OPERATOR_FIELDS`, `OVERRIDABLE_FIELDS`), the manifest's defaults, the
`declared` document (which fields it leaves out at their default, so rows
declared before a field existed stay equal), the sync plan's comparison of a
document with a row, the checks (`FIELD_CHECKS`, in the order they answer),
and the CLI's `info` view. docs/architecture.md, "adding a schedule field".

The dataclasses (`core.model.Schedule`, `ScheduleSpec`, `SchedulePatch`,
`CronDeclaration`, `Declared`) keep their own typed attributes (mypy reads
them); tests/core/test_fields.py holds them to this table, and the store's
columns, the API's models and the console's form too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from cronplane.core import controls, validation, window
from cronplane.core.choices import DEFAULT_ZONE, OVERLAPS
from cronplane.core.codec import encode_value

Kind = Literal["name", "cron", "zone", "json", "seconds", "choice", "bool", "instant", "count"]
Check = Callable[[Any, str], Any]


@dataclass(frozen=True, slots=True)
class ScheduleField:
    """One settable field of a schedule.

    - `default`: its value when not given (a create, a manifest's cron); `factory`
      instead, for a mutable default (a map, a list): called once per use.
    - `declarable`: a manifest may declare it (`Declared`, the `declared` document).
    - `overridable`: an operator's change to it on an app row is remembered as an
      override, which sync keeps; `operator`: an operator may change it on an app
      row at all (`enabled` is never synced, so it needs no override).
    - `since`: added after rows existed: the `declared` document leaves it out at
      its default, so older rows' documents stay equal (no re-sync churn).
    - `check(value, seed)`: the value as stored, or a coded error (`seed`: the
      schedule's identity, for `H` fields).
    - `info`: how `schedule info` shows it (None: shown by a view of its own).
    - `flag`, `help`: its `schedule add` option (a `bool` field's flag sets the value
      that is not its default); `choices` for a `choice` field; `required` on create.
    """

    name: str
    label: str
    kind: Kind
    check: Check
    default: Any = None
    factory: Callable[[], Any] | None = None
    declarable: bool = True
    overridable: bool = False
    operator: bool = False
    since: bool = False
    info: Callable[[Any], str] | None = None
    flag: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    required: bool = False

    def default_value(self) -> Any:
        """A fresh default (a new object for a mutable one)."""
        return self.factory() if self.factory is not None else self.default


def _seconds(value: Any) -> str:
    return "-" if value is None else f"{value}s"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# In the order they are checked: the first bad one answers.
SCHEDULE_FIELDS: Final = (
    ScheduleField(
        "job",
        "Job",
        "name",
        lambda value, seed: validation.validate_name(value, "job"),
        flag="--job",
        help="Job to enqueue (must exist in tenant/stack).",
        required=True,
    ),
    ScheduleField(
        "cron",
        "Cron",
        "cron",
        validation.normalize_cron,
        overridable=True,
        flag="--cron",
        help="Cron expression (any SPEC §3 form).",
        required=True,
    ),
    ScheduleField(
        "timezone",
        "Zone",
        "zone",
        lambda value, seed: validation.validate_zone(value),
        default=DEFAULT_ZONE,
        overridable=True,
        flag="--tz",
        help="IANA time zone.",
    ),
    # None: the job's default payload.
    ScheduleField(
        "payload",
        "Payload",
        "json",
        lambda value, seed: validation.validate_payload(value),
        overridable=True,
        info=_json,
        flag="--payload",
        help="JSON object, or @file.json (default: the job's).",
    ),
    ScheduleField(
        "misfire_grace",
        "Misfire grace",
        "seconds",
        lambda value, seed: validation.validate_misfire_grace(value),
        overridable=True,
        info=_seconds,
        flag="--misfire-grace",
        help="Skip occurrences later than this (s).",
    ),
    ScheduleField(
        "jitter",
        "Jitter",
        "seconds",
        lambda value, seed: controls.validate_jitter(value),
        overridable=True,
        since=True,
        flag="--jitter",
        help="Spread each fire by up to this many s (stable).",
    ),
    ScheduleField(
        "overlap",
        "Overlap",
        "choice",
        lambda value, seed: validation.validate_overlap(value),
        default="skip",
        info=str,
        choices=OVERLAPS,
        flag="--overlap",
        help="What a due occurrence does while an item of the schedule is queued or running.",
    ),
    ScheduleField(
        "timeout",
        "Timeout",
        "seconds",
        lambda value, seed: validation.validate_timeout(value),
        since=True,
        info=_seconds,
        flag="--timeout",
        help="Seconds an item may run (> 0); overrides the job's options.timeout.",
    ),
    ScheduleField(
        "enabled",
        "Enabled",
        "bool",
        lambda value, seed: validation.validate_enabled(value),
        default=True,
        declarable=False,
        flag="--disabled",
        help="Create it disabled (no next run).",
    ),
    ScheduleField(
        "start_at",
        "Start at",
        "instant",
        lambda value, seed: window.validate_instant(value, "start_at"),
        overridable=True,
        since=True,
        flag="--start-at",
        help="No fire before this ISO 8601 instant (naive: in --tz).",
    ),
    ScheduleField(
        "end_at",
        "End at",
        "instant",
        lambda value, seed: window.validate_instant(value, "end_at"),
        overridable=True,
        since=True,
        flag="--end-at",
        help="No fire after this ISO 8601 instant (naive: in --tz).",
    ),
    ScheduleField(
        "max_runs",
        "Max runs",
        "count",
        lambda value, seed: window.validate_max_runs(value),
        overridable=True,
        since=True,
        flag="--max-runs",
        help="End after this many fires.",
    ),
)

BY_NAME: Final = {f.name: f for f in SCHEDULE_FIELDS}
# A schedule's own fields: field -> check(value, seed), in the order they are checked.
FIELD_CHECKS: Final[dict[str, Check]] = {f.name: f.check for f in SCHEDULE_FIELDS}
# The fields of an `app` row an operator may change (SPEC §2); all but `enabled` are
# remembered as overrides (sync never touches `enabled`).
OVERRIDABLE_FIELDS: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.overridable)
OPERATOR_FIELDS: Final = (*OVERRIDABLE_FIELDS, "enabled")
# Declared keys a `declared` document leaves out at their default.
OPTIONAL_DECLARED: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.declarable and f.since)


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
