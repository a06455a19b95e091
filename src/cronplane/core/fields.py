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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from cronplane.core import calendars, labels, validation, window
from cronplane.core.choices import DEFAULT_ZONE, OVERLAP_NOTES, OVERLAPS
from cronplane.core.dst import GAP_NOTES, GAPS, REPEAT_NOTES, REPEATS
from cronplane.errors import CronplaneError, InvalidJitter, InvalidMaxRuns, InvalidRequest

Kind = Literal[
    "name", "cron", "zone", "json", "seconds", "choice", "bool", "instant", "count", "labels", "names"
]  # fmt: skip
Check = Callable[[Any, str], Any]
# A whole-number field's bounds: past a year, a misfire grace means "always fire" (say
# so with null); past a day, a spread is a different schedule, not jitter; one item
# runs at most a day; past a billion fires, a limit is no limit (say so with null).
MAX_MISFIRE_GRACE: Final = 366 * 24 * 3600
MAX_JITTER: Final = 86_400
MAX_TIMEOUT: Final = validation.MAX_TIMEOUT
MAX_RUNS: Final = 1_000_000_000


@dataclass(frozen=True, slots=True)
class ScheduleField:
    """One settable field of a schedule.

    - `default`: its value when not given (a create, a manifest's cron); `factory`
      instead, for a mutable default (a map, a list): called once per use.
    - `declarable`: a manifest may declare it (`Declared`, the `declared` document).
    - `overridable`: an operator's change to it on an app row is remembered as an
      override, which sync keeps; `operator`: an operator may change it on an app
      row at all (`enabled` is never synced, so it needs no override).
    - `timing`: it decides when the row fires: a change recomputes `next_run`.
    - `since`: added after rows existed: the `declared` document leaves it out at
      its default, so older rows' documents stay equal (no re-sync churn).
    - `check(value, seed)`: the value as stored, or a coded error (`seed`: the
      schedule's identity, for `H` fields). A whole-number field (`seconds`,
      `count`) has none: `minimum`..`maximum` is its check, `error` its code.
    - `nullable`: may be null as stored (default: when its default is None).
    - `info`: how `schedule info` shows it (None: shown by a view of its own).
    - `flag`, `help`: its `schedule add` option (a `bool` field's flag sets the value
      that is not its default); `choices` for a `choice` field (`notes`: what
      each means); `required` on create.
    - `about`: what it means, for the API's document; `placeholder`, `hint`: its
      console input's blank text and the line under it.
    """

    name: str
    label: str
    kind: Kind
    check: Check | None = None
    default: Any = None
    factory: Callable[[], Any] | None = None
    declarable: bool = True
    overridable: bool = False
    operator: bool = False
    since: bool = False
    timing: bool = False
    info: Callable[[Any], str] | None = None
    flag: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    notes: Mapping[str, str] | None = None
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    error: type[CronplaneError] = InvalidRequest
    nullable: bool | None = None
    about: str = ""
    placeholder: str = ""
    hint: str = ""

    def default_value(self) -> Any:
        """A fresh default (a new object for a mutable one)."""
        return self.factory() if self.factory is not None else self.default

    @property
    def stores_null(self) -> bool:
        """Whether a stored row may hold null here."""
        if self.nullable is not None:
            return self.nullable
        return not self.required and self.factory is None and self.default is None

    def validate(self, value: Any, seed: str) -> Any:
        """The value as stored, or this field's coded error."""
        if self.check is not None:
            return self.check(value, seed)
        if self.kind == "choice":
            return self._choice(value)
        return self._whole(value)

    def _choice(self, value: object) -> str | None:
        """One of `choices` (null when the default is null: the default)."""
        if value is None and self.default is None:
            return None
        return validation.one_of(value, self.choices, self.name, self.error)

    def _whole(self, value: object) -> int | None:
        """None, or a whole number in `minimum`..`maximum`."""
        if self.minimum is None or self.maximum is None:
            raise TypeError(f"field {self.name} has neither a check nor bounds")
        if value is None:
            return None
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and self.minimum <= value <= self.maximum
        ):
            return value
        unit = "whole seconds" if self.kind == "seconds" else "a whole number"
        raise self.error(
            f"{self.name} {value!r}"[:80]
            + f" is invalid: {unit} in {self.minimum:,}..{self.maximum:,}, or null",
            {"field": self.name},
        )


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
        timing=True,
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
        timing=True,
    ),
    # None: the job's default payload.
    ScheduleField(
        "payload",
        "Payload",
        "json",
        lambda value, seed: validation.validate_payload(value),
        overridable=True,
        nullable=False,
        info=_json,
        flag="--payload",
        help="JSON object, or @file.json (default: the job's).",
        about="Defaults to the job's default payload.",
    ),
    ScheduleField(
        "misfire_grace",
        "Misfire grace",
        "seconds",
        minimum=0,
        maximum=MAX_MISFIRE_GRACE,
        overridable=True,
        info=_seconds,
        flag="--misfire-grace",
        help="Skip occurrences later than this (s).",
        about="Seconds an occurrence may be late and still fire; null: always fire once.",
        placeholder="always fire once",
    ),
    ScheduleField(
        "jitter",
        "Jitter",
        "seconds",
        minimum=0,
        maximum=MAX_JITTER,
        error=InvalidJitter,
        overridable=True,
        since=True,
        flag="--jitter",
        help="Spread each fire by up to this many s (stable).",
        about="Seconds each fire is spread by (< the cron's shortest interval).",
        placeholder="fire on the dot",
        hint="Each fire moves a stable offset below this, shorter than the cron's interval.",
        timing=True,
    ),
    ScheduleField(
        "overlap",
        "Overlap",
        "choice",
        lambda value, seed: validation.validate_overlap(value),
        default="skip",
        info=str,
        choices=OVERLAPS,
        notes=OVERLAP_NOTES,
        flag="--overlap",
        help="What a due occurrence does while an item of the schedule is queued or running.",
        about="What a due occurrence does while an item of the schedule is queued or running.",
    ),
    ScheduleField(
        "timeout",
        "Timeout",
        "seconds",
        minimum=1,
        maximum=MAX_TIMEOUT,
        since=True,
        info=_seconds,
        flag="--timeout",
        help="Seconds an item may run (> 0); overrides the job's options.timeout.",
        about="Seconds an item may run; overrides the job's options.timeout.",
        placeholder="the job's",
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
        timing=True,
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
        about="No fire before this instant.",
        placeholder="no start: fires from now",
        timing=True,
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
        about="No fire after this instant.",
        placeholder="no end",
        hint="24-hour ISO, e.g. 2027-01-01 03:00 (in the schedule's zone) or "
        "2027-01-01T03:00+01:00. No fire outside the window; after it the schedule is ended.",
        timing=True,
    ),
    ScheduleField(
        "max_runs",
        "Max runs",
        "count",
        minimum=1,
        maximum=MAX_RUNS,
        error=InvalidMaxRuns,
        overridable=True,
        since=True,
        flag="--max-runs",
        help="End after this many fires.",
        about="Fires before the schedule ends (>= 1); null: no limit.",
        placeholder="no limit",
        timing=True,
    ),
    ScheduleField(
        "dst_gap",
        "Clocks forward",
        "choice",
        default="shift",
        choices=GAPS,
        notes=GAP_NOTES,
        overridable=True,
        since=True,
        info=str,
        flag="--dst-gap",
        help="A time the spring jump skips: shift (after the jump), skip, or later (by the gap).",
        about="A fixed time a spring-forward jump skips: `shift` runs it at the first "
        "instant after the jump (Debian cron), `skip` does not run it that day; `later` "
        "runs the first skipped time of any expression the gap's length later (Celery beat).",
        timing=True,
    ),
    ScheduleField(
        "dst_repeat",
        "Clocks back",
        "choice",
        choices=REPEATS,
        notes=REPEAT_NOTES,
        overridable=True,
        since=True,
        info=lambda value: value or "default (fixed times: first; wildcard hours: both)",
        flag="--dst-repeat",
        help="Which passes of a repeated autumn hour run (default: Debian's).",
        about="Which passes of a repeated autumn wall time run: `first`, `second` or "
        "`both`; null: Debian cron's choice (a fixed time the first, a wildcard or "
        "stepped minute or hour both).",
        placeholder="default: fixed times first, wildcard hours both",
        timing=True,
    ),
    ScheduleField(
        "labels",
        "Labels",
        "labels",
        lambda value, seed: labels.validate_labels(value),
        factory=dict,
        overridable=True,
        since=True,
        info=labels.labels_text,
        flag="--label",
        help="A label KEY=VALUE (repeatable; Kubernetes' rules).",
        about="Labels: Kubernetes-style keys to values (at most 32); a manifest's apply "
        "to each of its crons, a cron's own add to them.",
        placeholder="team=payments, tier=batch",
        hint="KEY=VALUE pairs, separated by commas.",
    ),
    ScheduleField(
        "exclude",
        "Excluded calendars",
        "names",
        lambda value, seed: calendars.validate_exclude(value),
        factory=list,
        overridable=True,
        since=True,
        info=lambda value: ", ".join(value) or "-",
        flag="--exclude",
        help="A calendar whose days it does not run on (repeatable; `calendar add`).",
        about="Calendars (of the tenant) whose days the schedule does not run on; "
        "`on_excluded` says what such an occurrence does.",
        placeholder="no calendar",
        hint="Calendar names, separated by commas (Calendars page).",
        timing=True,
    ),
    ScheduleField(
        "on_excluded",
        "On an excluded day",
        "choice",
        default="skip",
        choices=calendars.ON_EXCLUDED,
        notes=calendars.ON_EXCLUDED_NOTES,
        overridable=True,
        since=True,
        info=str,
        flag="--on-excluded",
        help="An occurrence on an excluded day: skip, or run on the previous/next business day.",
        about="What an occurrence on a day an excluded calendar names does: `skip` (the "
        "ledger names the calendar), `previous` or `next` (runs once, at the same time on "
        "the business day before or after).",
        timing=True,
    ),
)

BY_NAME: Final = {f.name: f for f in SCHEDULE_FIELDS}
# A schedule's own fields: field -> check(value, seed), in the order they are checked.
FIELD_CHECKS: Final[dict[str, Check]] = {f.name: f.validate for f in SCHEDULE_FIELDS}
# The fields of an `app` row an operator may change (SPEC §2); all but `enabled` are
# remembered as overrides (sync never touches `enabled`).
OVERRIDABLE_FIELDS: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.overridable)
OPERATOR_FIELDS: Final = (*OVERRIDABLE_FIELDS, "enabled")
# The fields that decide when a row fires: a change recomputes its next run.
WHEN_FIELDS: Final = frozenset(f.name for f in SCHEDULE_FIELDS if f.timing)
# Declared keys a `declared` document leaves out at their default.
OPTIONAL_DECLARED: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.declarable and f.since)
