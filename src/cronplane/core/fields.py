"""The schedule's fields in one table: what each is, its default, who may set it, its check.

Every layer that lists a schedule's settable fields reads this table instead
of a list of its own: the operator's and the manifest's field sets
(`OPERATOR_FIELDS`, `OVERRIDABLE_FIELDS`), the manifest's defaults, the
`declared` document (which fields it leaves out at their default, so rows
declared before a field existed stay equal), the sync plan's comparison of a
document with a row, the checks (`FIELD_CHECKS`, in the order they answer),
a patch's fields, the store's columns and their checks, the API's models, the
CLI's options and `info` view, and the console's form. docs/architecture.md,
"adding a schedule field".

The typed attributes live here too: `Settings` holds every field a schedule,
a create, a manifest's cron and its resolved declaration share (all but what
a schedule runs, when, and where: `job`, `cron`, `timezone`, `payload`,
`enabled`), and those records inherit it; tests/core/test_fields.py holds its
defaults to the rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from cronplane.core import calendars, labels, validation, window
from cronplane.core.choices import DEFAULT_ZONE, OVERLAP_NOTES, OVERLAPS, Overlap
from cronplane.core.dst import GAP_NOTES, GAPS, REPEAT_NOTES, REPEATS, DstPolicy, Gap, Repeat
from cronplane.core.schedule_field import Check, ScheduleField
from cronplane.errors import InvalidJitter, InvalidMaxRuns

# A whole-number field's bounds: past a year, a misfire grace means "always fire" (say
# so with null); past a day, a spread is a different schedule, not jitter; one item
# runs at most a day; past a billion fires, a limit is no limit (say so with null).
MAX_MISFIRE_GRACE: Final = 366 * 24 * 3600
MAX_JITTER: Final = 86_400
MAX_TIMEOUT: Final = validation.MAX_TIMEOUT
MAX_RUNS: Final = 1_000_000_000


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
# The fields a stored row may hold null in (a patch's None clears them).
NULLABLE_FIELDS: Final = frozenset(f.name for f in SCHEDULE_FIELDS if f.stores_null)
# What a manifest declares for one cron, in the order its problems are reported;
# `declared` stores these keys, and leaves OPTIONAL_DECLARED out at their default.
DECLARED_FIELDS: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.declarable)
OPTIONAL_DECLARED: Final = tuple(name for name in DECLARED_FIELDS if BY_NAME[name].since)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The typed fields `Schedule`, `ScheduleSpec`, `CronDeclaration` and `Declared`
    share, at their rows' defaults: each of those records inherits them (keyword
    only, after its own). A new field that every one of them carries is one
    attribute here beside its row."""

    misfire_grace: int | None = None
    overlap: Overlap = "skip"
    jitter: int | None = None
    timeout: int | None = None
    # The active window (naive: a wall time in the input's `timezone`; aware on a
    # row) and the run limit.
    start_at: datetime | None = None
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
