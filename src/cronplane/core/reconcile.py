"""The sync planner (SPEC §5): declared crons + existing rows -> the plan. Pure.

Rules, in the order the planner applies them to each name:

1. declared, no row                      -> create an `app` row
2. declared, a `user`/`system` row       -> conflict (never overwritten)
3. declared, an `app` row, same
   declaration as last synced            -> unchanged (drift reported for overrides)
4. declared, an `app` row, declaration
   changed                               -> update the fields no operator
                                            overrode, and the stored declaration
5. an `app` row no longer declared       -> remove

`enabled` is never planned: it belongs to operators. Invariants (property
tested): applying a plan and planning again yields a plan with no writes;
`user` and `system` rows never appear among the writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from cronplane.core import validation
from cronplane.core.calendars import Calendar
from cronplane.core.codec import encode_value, from_document, to_document
from cronplane.core.controls import check_jitter
from cronplane.core.cron import parse
from cronplane.core.declared import declared_value
from cronplane.core.edits import check_field
from cronplane.core.excluded import exclusion_of
from cronplane.core.fields import DECLARED_FIELDS, WHEN_FIELDS
from cronplane.core.inputs import CronDeclaration, Declared
from cronplane.core.model import Job, Schedule, Scope
from cronplane.core.occurrences import first_run, row_next_run
from cronplane.core.window import resolve_window
from cronplane.errors import CronplaneError, JobInactive, JobNotFound

# What a declaration defines besides its job (resolved above), in the order checked.
DEFINITION_FIELDS = tuple(name for name in DECLARED_FIELDS if name != "job")


class SyncedRow(Protocol):
    """What the planner reads of a row. A full Schedule is one; so is the store's
    narrow `SyncHead`, which suffices for rows `rows_to_inspect` leaves out."""

    @property
    def id(self) -> UUID: ...
    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def revision(self) -> int: ...
    @property
    def declared(self) -> dict[str, Any] | None: ...
    @property
    def overrides(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class PlannedCreate:
    """A declared cron with no row: create it."""

    name: str
    declared: Declared


@dataclass(frozen=True, slots=True)
class PlannedUpdate:
    """An `app` row whose declaration changed: set `changes` and the new declaration."""

    name: str
    id: UUID
    revision: int
    declared: Declared
    changes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PlannedRemove:
    """An `app` row the app no longer declares."""

    name: str
    id: UUID


@dataclass(frozen=True, slots=True)
class SyncConflict:
    """A declared name already taken by a row the app does not own."""

    name: str
    source: str


@dataclass(frozen=True, slots=True)
class Drift:
    """A field an operator overrode: what the row has, and what the app declares."""

    name: str
    field: str
    current: Any
    declared: Any


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """What a sync does (or, on a dry run, would do)."""

    created: tuple[PlannedCreate, ...] = ()
    updated: tuple[PlannedUpdate, ...] = ()
    removed: tuple[PlannedRemove, ...] = ()
    unchanged: tuple[str, ...] = ()
    conflicts: tuple[SyncConflict, ...] = ()
    drift: tuple[Drift, ...] = field(default=())

    @property
    def writes(self) -> bool:
        """True when applying the plan changes any row."""
        return bool(self.created or self.updated or self.removed)

    def summary(self) -> dict[str, int]:
        """How many of each."""
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "removed": len(self.removed),
            "unchanged": len(self.unchanged),
            "conflicts": len(self.conflicts),
            "drift": len(self.drift),
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> SyncPlan:
        """The plan a `to_dict` document (with the API's `declared` added) stands for;
        row ids are not sent, so they are nil UUIDs (the remote client's plans)."""
        declared = {
            name: from_document(Declared, value)
            for name, value in document.get("declared", {}).items()
        }

        def declaration(name: str) -> Declared:
            return declared.get(name) or Declared("", "", "UTC", {})

        def changes(item: Mapping[str, Any]) -> dict[str, Any]:
            wanted = declaration(item["name"])
            return {key: getattr(wanted, key, None) for key in item["fields"]}

        return cls(
            created=tuple(PlannedCreate(name, declaration(name)) for name in document["created"]),
            updated=tuple(
                PlannedUpdate(item["name"], _NIL, 0, declaration(item["name"]), changes(item))
                for item in document["updated"]
            ),
            removed=tuple(PlannedRemove(name, _NIL) for name in document["removed"]),
            unchanged=tuple(document["unchanged"]),
            conflicts=tuple(from_document(SyncConflict, c) for c in document["conflicts"]),
            drift=tuple(from_document(Drift, x) for x in document["drift"]),
        )

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON: names per outcome, conflicts and drift in full."""
        return {
            "created": [item.name for item in self.created],
            "updated": [
                {"name": item.name, "fields": sorted(item.changes)} for item in self.updated
            ],
            "removed": [item.name for item in self.removed],
            "unchanged": list(self.unchanged),
            "conflicts": [to_document(conflict) for conflict in self.conflicts],
            "drift": [to_document(drift) for drift in self.drift],
        }


_NIL = UUID(int=0)


def rows_to_inspect(declared: Mapping[str, Declared], heads: Iterable[SyncedRow]) -> set[str]:
    """Names of the rows whose field values the planner reads: declared `app` rows
    whose declaration changed or that carry overrides. Every other row can be
    given to `plan_sync` as a narrow head (a repeated sync reads little)."""
    return {
        head.name
        for head in heads
        if head.source == "app"
        and head.name in declared
        and (head.overrides or head.declared != declared[head.name].to_dict())
    }


def plan_sync(declared: Mapping[str, Declared], existing: Iterable[SyncedRow]) -> SyncPlan:
    """Compare what the app declares (by name) with the scope's rows (any source).

    Rows named by `rows_to_inspect` must be full Schedules; the rest may be heads.
    """
    rows = {row.name: row for row in existing}
    created: list[PlannedCreate] = []
    updated: list[PlannedUpdate] = []
    removed: list[PlannedRemove] = []
    unchanged: list[str] = []
    conflicts: list[SyncConflict] = []
    drift: list[Drift] = []
    for name in sorted(declared):
        wanted = declared[name]
        row = rows.get(name)
        if row is None:
            created.append(PlannedCreate(name, wanted))
            continue
        if row.source != "app":
            conflicts.append(SyncConflict(name, row.source))
            continue
        document = wanted.to_dict()
        drift.extend(
            Drift(name, key, current_value(row, key), declared_value(document, key))
            for key in row.overrides
        )
        if row.declared == document:
            unchanged.append(name)
            continue
        changes = {
            key: getattr(wanted, key)
            for key in DECLARED_FIELDS
            if key not in row.overrides and current_value(row, key) != declared_value(document, key)
        }
        updated.append(PlannedUpdate(name, row.id, row.revision, wanted, changes))
    removed = [
        PlannedRemove(row.name, row.id)
        for name, row in sorted(rows.items())
        if row.source == "app" and name not in declared
    ]
    return SyncPlan(
        created=tuple(created),
        updated=tuple(updated),
        removed=tuple(removed),
        unchanged=tuple(unchanged),
        conflicts=tuple(conflicts),
        drift=tuple(drift),
    )


def current_value(row: SyncedRow | Schedule, key: str) -> Any:
    """A declarable field's value on the row, as the `declared` document has it."""
    return encode_value(getattr(row, key))


def restore_declared(row: Schedule) -> dict[str, Any]:
    """For "reset to manifest": the overridden fields' declared values."""
    if row.declared is None:
        return {}
    # A key the document leaves out has its default (Declared.to_dict drops unset limits).
    declared = from_document(Declared, {"job": row.job, **row.declared})
    return {
        key: getattr(declared, key)
        for key in row.overrides
        if key in DECLARED_FIELDS
        and current_value(row, key) != encode_value(getattr(declared, key))
    }


def resolve_declarations(
    scope: Scope,
    crons: Mapping[str, CronDeclaration],
    jobs: Mapping[str, Job],
) -> tuple[dict[str, Declared], list[str]]:
    """Resolve each declared cron in its scope: job, normalized cron (H seeded by the
    schedule's identity), zone, concrete payload (the job's default when omitted).

    Returns the resolved declarations and every problem as
    `crons.NAME.FIELD: CODE message`; nothing is half-resolved.
    """
    resolved: dict[str, Declared] = {}
    problems: list[str] = []
    for name in sorted(crons):
        declaration = crons[name]
        path = f"crons.{name}"
        field_name = "name"
        try:
            validation.validate_name(name, "cron name")
            job_name = declaration.job or name
            field_name = "job"
            validation.validate_name(job_name, "job")
            job = jobs.get(job_name)
            if job is None:
                raise JobNotFound(
                    f"job {job_name!r} not found in {scope.tenant}/{scope.stack}",
                    {"job": job_name},
                )
            if not job.active:
                raise JobInactive(f"job {job_name!r} is inactive", {"job": job_name})
            values: dict[str, Any] = {"job": job_name}
            for field_name in DEFINITION_FIELDS:
                given = getattr(declaration, field_name)
                if field_name == "payload" and given is None:
                    values[field_name] = dict(job.payload)
                else:
                    values[field_name] = check_field(field_name, given, scope.identity(name))
                if field_name == "payload":
                    validation.validate_against_schema(values["payload"], job.payload_schema)
            field_name = "end_at"
            # Naive bounds are wall times in the declared zone.
            values.update(resolve_window(values, values["timezone"]))
        except CronplaneError as error:
            where = path if field_name == "name" else f"{path}.{field_name}"
            problems.append(f"{where}: {error.code.text} {error.message}")
            continue
        resolved[name] = Declared(**values)
    return resolved, problems


def check_fires(
    plan: SyncPlan,
    rows: Mapping[str, Schedule],
    now: datetime,
    min_interval: int = 1,
    calendars: Mapping[str, Calendar] | None = None,
) -> tuple[dict[str, datetime | None], list[str]]:
    """First (nominal) fires of created rows, and next runs of updated rows whose
    cron, zone, jitter, window or run limit changed (None: the updated row has
    nothing left, it ends); the service adds each row's jitter offset.

    The five-year rule and the installation's minimum interval (`min_interval`
    seconds, X400010INTMIN) are write-time rules, so only what the plan writes
    is checked (a row kept as it is stays, even under a raised minimum);
    returns {name: first fire} and the problems. `calendars` are the tenant's that the
    plan's rows exclude (a name missing from it is a problem: create the calendar first).
    """
    calendars = calendars or {}
    fires: dict[str, datetime | None] = {}
    problems: list[str] = []
    for created in plan.created:
        wanted = created.declared
        try:
            validation.check_min_interval(parse(wanted.cron), min_interval)
            exclusion = exclusion_of(wanted.exclude, wanted.on_excluded, wanted.timezone, calendars)
            fires[created.name] = first_run(
                wanted.cron,
                wanted.timezone,
                now,
                start_at=wanted.start_at,
                end_at=wanted.end_at,
                dst=wanted.dst,
                exclusion=exclusion,
            )
        except CronplaneError as error:
            where = error.detail.get("field", "cron") if error.detail else "cron"
            problems.append(f"crons.{created.name}.{where}: {error.code.text} {error.message}")
            continue
        _check_jitter(created.name, wanted.cron, wanted.jitter, problems)
    for item in plan.updated:
        if not (WHEN_FIELDS - {"enabled"}) & set(item.changes):
            continue
        row = rows[item.name]
        after = replace(row, **item.changes)
        try:
            exclusion = exclusion_of(after.exclude, after.on_excluded, after.timezone, calendars)
            if {"cron", "timezone"} & set(item.changes):
                validation.check_min_interval(parse(after.cron), min_interval)
                first_run(after.cron, after.timezone, now, dst=after.dst, exclusion=exclusion)
            fires[item.name] = row_next_run(after, max(after.last_run or now, now), exclusion)
        except CronplaneError as error:
            problems.append(f"crons.{item.name}.cron: {error.code.text} {error.message}")
            continue
        if {"cron", "jitter"} & set(item.changes):
            _check_jitter(item.name, after.cron, after.jitter, problems)
    return fires, problems


def _check_jitter(name: str, cron: str, jitter: int | None, problems: list[str]) -> None:
    """A declared jitter must be shorter than the cron's shortest interval."""
    try:
        check_jitter(cron, jitter)
    except CronplaneError as error:
        problems.append(f"crons.{name}.jitter: {error.code.text} {error.message}")
