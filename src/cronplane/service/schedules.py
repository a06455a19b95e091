"""Schedule use cases (SPEC §2): create, read, list, update, enable, disable, remove,
record a run, reset an app row to its manifest, and read its history.

Rules enforced here and nowhere else:
- everything is validated before the transaction writes anything;
- the job must exist in (tenant, stack) and be active;
- the payload defaults to the job's default payload and must match its schema;
- `last_run` is the creation time; `next_run` is the first occurrence strictly
  after max(last_run, now): no back-fill on create or enable; disable clears it;
- every change increments `revision`; a given stale revision is StaleRevision;
- on `app` rows an operator may change only OPERATOR_FIELDS, each change of a
  declarable field is remembered in `overrides`; removal is AppOwned.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events
from cronplane.codes import Code
from cronplane.core import validation
from cronplane.core.model import (
    OPERATOR_FIELDS,
    OVERRIDABLE_FIELDS,
    Job,
    Overlap,
    Page,
    Schedule,
    SchedulePatch,
    ScheduleSpec,
    Scope,
    Source,
)
from cronplane.core.occurrences import first_run
from cronplane.core.reconcile import restore_declared
from cronplane.errors import (
    AppOwned,
    CronplaneError,
    InvalidRequest,
    InvalidState,
    JobInactive,
    JobNotFound,
    ScheduleExists,
    ScheduleNotFound,
    StaleRevision,
)
from cronplane.events import Event
from cronplane.ids import time_ordered_id
from cronplane.service.base import ServiceBase, Transaction, checked_scope, json_value
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.events import append_events, event_values, list_events
from cronplane.store.schedules import ScheduleFilter

MAX_PAGE = 1000
MAX_SEARCH = 128


def active_job(conn: Connection, scope: Scope, name: str) -> Job:
    """The job a schedule runs: JobNotFound or JobInactive when it cannot be used."""
    job = job_store.get_job(conn, scope.tenant, scope.stack, name)
    if job is None:
        raise JobNotFound(
            f"job {name!r} not found in {scope.tenant}/{scope.stack}",
            {"tenant": scope.tenant, "stack": scope.stack, "job": name},
        )
    if not job.active:
        raise JobInactive(f"job {name!r} is inactive", {"job": name})
    return job


def encode_cursor(schedule: Schedule) -> str:
    """An opaque keyset cursor for the row after which the next page starts."""
    raw = json.dumps([schedule.name, schedule.stack, schedule.environment]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str, str]:
    """The keyset of a cursor; InvalidRequest when it was not made by encode_cursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        name, stack, environment = json.loads(raw)
        if not all(isinstance(part, str) for part in (name, stack, environment)):
            raise ValueError(cursor)
    except (ValueError, binascii.Error, TypeError) as error:
        raise InvalidRequest(f"cursor {cursor[:40]!r} is invalid", {"field": "cursor"}) from error
    return name, stack, environment


@dataclass(frozen=True, slots=True)
class NewSchedule:
    """One create request: where, what, and who asks (see `create_schedules`)."""

    scope: Scope
    spec: ScheduleSpec
    actor: str
    source: Source = "user"


@dataclass(frozen=True, slots=True)
class _CheckedCreate:
    """A create request whose fields passed every check that needs no database."""

    scope: Scope
    spec: ScheduleSpec
    actor: str
    source: Source
    name: str
    timezone: str
    cron: str
    payload: dict[str, Any] | None
    misfire_grace: int | None
    overlap: Overlap


def _check_create(request: NewSchedule) -> _CheckedCreate:
    """Validate what needs no database; the coded error of the first bad field otherwise."""
    if request.source == "app":
        raise InvalidRequest("app schedules are created by sync, from the app's manifest")
    scope, spec = checked_scope(request.scope), request.spec
    name = validation.validate_name(spec.name or spec.job, "name")
    validation.validate_name(spec.job, "job")
    return _CheckedCreate(
        scope=scope,
        spec=spec,
        actor=request.actor,
        source=request.source,
        name=name,
        timezone=validation.validate_zone(spec.timezone),
        cron=validation.normalize_cron(spec.cron, scope.identity(name)),
        payload=None if spec.payload is None else validation.validate_payload(spec.payload),
        misfire_grace=validation.validate_misfire_grace(spec.misfire_grace),
        overlap=validation.validate_overlap(spec.overlap),
    )


def _new_row(
    tx: Transaction, item: _CheckedCreate, jobs: dict[tuple[str, str, str], Job | CronplaneError]
) -> Schedule:
    """The row a checked request creates (job looked up once per transaction, in `jobs`)."""
    first = first_run(item.cron, item.timezone, tx.now)
    key = (item.scope.tenant, item.scope.stack, item.spec.job)
    if key not in jobs:
        try:
            jobs[key] = active_job(tx.conn, item.scope, item.spec.job)
        except CronplaneError as error:
            jobs[key] = error
    job = jobs[key]
    if isinstance(job, CronplaneError):
        raise job
    payload = dict(job.payload) if item.payload is None else item.payload
    validation.validate_against_schema(payload, job.payload_schema)
    return Schedule(
        id=time_ordered_id(tx.now),
        tenant=item.scope.tenant,
        stack=item.scope.stack,
        environment=item.scope.environment,
        name=item.name,
        job=job.name,
        cron=item.cron,
        timezone=item.timezone,
        payload=payload,
        enabled=item.spec.enabled,
        source=item.source,
        misfire_grace=item.misfire_grace,
        overlap=item.overlap,
        last_run=tx.now,
        next_run=first if item.spec.enabled else None,
        created_at=tx.now,
        updated_at=tx.now,
        revision=1,
        declared=None,
        overrides=(),
    )


class ScheduleUseCases(ServiceBase):
    """Schedules: one transaction per use case, an event with its actor per change."""

    def create_schedule(
        self,
        scope: Scope,
        spec: ScheduleSpec,
        *,
        actor: str,
        source: Source = "user",
    ) -> Schedule:
        """Create a `user` (or `system`) schedule; `app` rows come only from sync.

        Raises InvalidName, CronRejected, UnknownZone, InvalidPayload,
        InvalidRequest, JobNotFound, JobInactive or ScheduleExists, and then
        writes nothing.
        """
        (result,) = self.create_schedules([NewSchedule(scope, spec, actor, source)])
        if isinstance(result, CronplaneError):
            raise result
        return result

    def create_schedules(self, requests: Sequence[NewSchedule]) -> list[Schedule | CronplaneError]:
        """Many single creates in one transaction (group commit), each judged on its own.

        The answer for each request is what `create_schedule` alone would
        answer — the new schedule or its coded error — in order; a later
        request for a key an earlier one took is ScheduleExists. A refused
        request writes nothing; the others still commit. An error of the
        transaction itself (database unavailable) is raised for all.
        """
        results: list[Schedule | CronplaneError | None] = [None] * len(requests)
        checked: list[tuple[int, _CheckedCreate]] = []
        for index, request in enumerate(requests):
            try:
                checked.append((index, _check_create(request)))
            except CronplaneError as error:
                results[index] = error
        if checked:
            with self._write() as tx:
                jobs: dict[tuple[str, str, str], Job | CronplaneError] = {}
                rows: list[tuple[int, _CheckedCreate, Schedule]] = []
                for index, item in checked:
                    try:
                        rows.append((index, item, _new_row(tx, item, jobs)))
                    except CronplaneError as error:
                        results[index] = error
                inserted = schedule_store.insert_schedules(tx.conn, [row for _, _, row in rows])
                created: list[Mapping[str, Any]] = []
                for index, item, schedule in rows:
                    if schedule.id in inserted:
                        results[index] = schedule
                        created.append(
                            change_event(
                                tx, events.SCHEDULE_CREATED, schedule, item.actor, "created"
                            )
                        )
                    else:
                        results[index] = ScheduleExists(
                            f"schedule {schedule.name!r} already exists in "
                            f"{schedule.tenant}/{schedule.stack}/{schedule.environment}",
                            {"name": schedule.name},
                        )
                append_events(tx.conn, created)
                if created:
                    tx.schedules_changed()
        answers = [result for result in results if result is not None]
        if len(answers) != len(requests):  # an unanswered request would shift the others'
            raise RuntimeError("a create request was left without an answer")
        return answers

    def get_schedule(self, scope: Scope, name: str) -> Schedule:
        """The schedule with this key; ScheduleNotFound otherwise."""
        with self._read() as conn:
            return existing(conn, scope, name)

    def get_schedule_by_id(self, tenant: str, schedule_id: UUID) -> Schedule:
        """The schedule with this id in the tenant; ScheduleNotFound otherwise."""
        with self._read() as conn:
            schedule = schedule_store.get_by_id(conn, tenant, schedule_id)
        if schedule is None:
            raise ScheduleNotFound(f"schedule {schedule_id} not found", {"id": str(schedule_id)})
        return schedule

    def list_schedules(
        self,
        tenant: str,
        *,
        stack: str | None = None,
        environment: str | None = None,
        source: str | None = None,
        enabled: bool | None = None,
        job: str | None = None,
        search: str | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> Page:
        """One page ordered by (name, stack, environment); pass `next_cursor` for the next.

        `search` keeps rows whose name, job, stack or environment contains it
        (case-insensitive); the cursor pages through the matches exactly.
        """
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit {limit} is out of range 1..{MAX_PAGE}", {"field": "limit"})
        if source is not None and source not in ("app", "user", "system"):
            raise InvalidRequest(f"source {source!r} is invalid", {"field": "source"})
        search = (search or "").strip() or None
        if search is not None and len(search) > MAX_SEARCH:
            raise InvalidRequest(
                f"search is longer than {MAX_SEARCH} characters", {"field": "search"}
            )
        filters = ScheduleFilter(tenant, stack, environment, source, enabled, job, search)
        after = None if cursor is None else decode_cursor(cursor)
        with self._read() as conn:
            # One extra row tells whether another page exists.
            rows = schedule_store.list_page(conn, filters, after=after, limit=limit + 1)
        items = tuple(rows[:limit])
        more = len(rows) > limit
        return Page(items, encode_cursor(items[-1]) if more and items else None)

    def update_schedule(
        self,
        scope: Scope,
        name: str,
        patch: SchedulePatch,
        *,
        actor: str,
        revision: int | None = None,
    ) -> Schedule:
        """Change fields of a schedule; an unchanged patch writes nothing.

        On an `app` row only cron, timezone, payload, misfire_grace and enabled
        may change (AppOwned otherwise), and each changed declarable field is
        added to `overrides`.
        """
        given = patch.given()
        clean = check_patch(given)
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            return self._apply(tx, row, clean, actor, revision, events.SCHEDULE_UPDATED)

    def enable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """Enable; next_run is computed forward from now (no back-fill)."""
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            return self._apply(tx, row, {"enabled": True}, actor, revision, events.SCHEDULE_ENABLED)

    def disable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """Disable; next_run is cleared."""
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            return self._apply(
                tx, row, {"enabled": False}, actor, revision, events.SCHEDULE_DISABLED
            )

    def remove_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """Delete a `user` or `system` row; AppOwned for an `app` row."""
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            check_revision(row, revision)
            if row.source == "app":
                raise AppOwned(
                    f"schedule {name!r} belongs to app {row.stack!r}: remove it from the "
                    "manifest, or disable it",
                    {"name": name, "stack": row.stack},
                )
            schedule_store.delete_schedules(tx.conn, [row.id])
            schedule_event(tx, events.SCHEDULE_REMOVED, row, actor, "removed")
            tx.schedules_changed()
        return row

    def record_run(
        self, scope: Scope, name: str, *, actor: str, at: datetime | None = None
    ) -> Schedule:
        """Record that the schedule ran at `at` (default now) and move next_run forward.

        Run bookkeeping, not a definition change: `revision` is not incremented,
        so an operator's edit based on a read before the run is not refused.
        """
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            ran = tx.now if at is None else at
            next_run = None
            if row.enabled:
                next_run = first_run(row.cron, row.timezone, max(ran, tx.now))
            values = {"last_run": ran, "next_run": next_run}
            schedule_store.update_schedule(tx.conn, row.id, values)
            updated = replace(row, last_run=ran, next_run=next_run)
            schedule_event(
                tx,
                events.SCHEDULE_UPDATED,
                updated,
                actor,
                "run recorded",
                {"last_run": ran.isoformat()},
            )
            tx.schedules_changed()
        return updated

    def reset_to_manifest(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """Clear an `app` row's overrides and restore what its manifest declares."""
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            check_revision(row, revision)
            if row.source != "app" or row.declared is None:
                raise InvalidState(f"schedule {name!r} is not app-owned: nothing to reset to")
            if not row.overrides:
                return row
            values: dict[str, Any] = dict(restore_declared(row))
            values["overrides"] = []
            return self._write_changes(tx, row, values, actor, events.SCHEDULE_RESET, "reset")

    def schedule_history(
        self, scope: Scope, name: str, *, limit: int = 50, before_id: int | None = None
    ) -> list[Event]:
        """The schedule's events (changes and the occurrence ledger), newest first."""
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit {limit} is out of range 1..{MAX_PAGE}", {"field": "limit"})
        with self._read() as conn:
            row = existing(conn, scope, name)
            return list_events(
                conn, tenant=scope.tenant, schedule_id=row.id, before_id=before_id, limit=limit
            )

    # -- the one update path -------------------------------------------------

    def _apply(
        self,
        tx: Transaction,
        row: Schedule,
        given: dict[str, Any],
        actor: str,
        revision: int | None,
        code: Code,
    ) -> Schedule:
        check_revision(row, revision)
        if row.source == "app":
            refused = sorted(set(given) - set(OPERATOR_FIELDS))
            if refused:
                raise AppOwned(
                    f"{', '.join(refused)} of app schedule {row.name!r} "
                    "come from its manifest: change the manifest",
                    {"name": row.name, "fields": refused},
                )
        values = dict(given)
        if "cron" in values:
            values["cron"] = validation.normalize_cron(values["cron"], row.identity)
        changes = {key: value for key, value in values.items() if getattr(row, key) != value}
        if not changes:
            return row
        if "job" in changes or "payload" in changes:
            job = active_job(tx.conn, row.scope, changes.get("job", row.job))
            validation.validate_against_schema(
                changes.get("payload", row.payload), job.payload_schema
            )
        if row.source == "app":
            overridden = set(row.overrides) | (set(changes) & set(OVERRIDABLE_FIELDS))
            if overridden != set(row.overrides):
                changes["overrides"] = sorted(overridden)
        verb = {
            events.SCHEDULE_ENABLED: "enabled",
            events.SCHEDULE_DISABLED: "disabled",
        }.get(code, "updated")
        return self._write_changes(tx, row, changes, actor, code, verb)

    def _write_changes(
        self,
        tx: Transaction,
        row: Schedule,
        changes: dict[str, Any],
        actor: str,
        code: Code,
        verb: str,
    ) -> Schedule:
        """Write `changes` (+ next_run, revision, updated_at) and the event."""
        fields: dict[str, Any] = {
            key: tuple(value) if key == "overrides" else value for key, value in changes.items()
        }
        updated = replace(row, **fields)
        values = dict(changes)
        if {"cron", "timezone", "enabled"} & set(changes):
            values["next_run"] = (
                # After the last run, but never in the past: no back-fill.
                first_run(updated.cron, updated.timezone, max(updated.last_run or tx.now, tx.now))
                if updated.enabled
                else None
            )
        values["revision"] = row.revision + 1
        values["updated_at"] = tx.now
        if not schedule_store.update_schedule(
            tx.conn, row.id, values, expected_revision=row.revision
        ):
            raise StaleRevision(f"schedule {row.name!r} changed concurrently; read it again")
        updated = replace(
            updated,
            next_run=values.get("next_run", row.next_run),
            revision=values["revision"],
            updated_at=tx.now,
        )
        detail = {
            "fields": sorted(k for k in changes if k != "overrides"),
            "changes": {
                key: {"from": json_value(getattr(row, key)), "to": json_value(value)}
                for key, value in changes.items()
                if key not in ("payload", "overrides")
            },
        }
        schedule_event(tx, code, updated, actor, verb, detail)
        tx.schedules_changed()
        return updated


def check_patch(given: dict[str, Any]) -> dict[str, Any]:
    """Validate each field a patch sets (the cron is normalized later, with its seed)."""
    clean = dict(given)
    if "job" in clean:
        validation.validate_name(clean["job"], "job")
    if "cron" in clean:
        validation.normalize_cron(clean["cron"], "check")
    if "timezone" in clean:
        validation.validate_zone(clean["timezone"])
    if "payload" in clean:
        validation.validate_payload(clean["payload"])
    if "misfire_grace" in clean:
        validation.validate_misfire_grace(clean["misfire_grace"])
    if "overlap" in clean:
        validation.validate_overlap(clean["overlap"])
    if "enabled" in clean and not isinstance(clean["enabled"], bool):
        raise InvalidRequest("enabled must be true or false", {"field": "enabled"})
    return clean


def check_revision(row: Schedule, revision: int | None) -> None:
    """StaleRevision when a revision was given and the row moved past it."""
    if revision is not None and revision != row.revision:
        raise StaleRevision(
            f"schedule {row.name!r} is at revision {row.revision}, not {revision}",
            {"current": row.revision, "given": revision},
        )


def existing(conn: Connection, scope: Scope, name: str, *, for_update: bool = False) -> Schedule:
    """The schedule with this key; ScheduleNotFound otherwise."""
    row = schedule_store.get_by_key(
        conn, scope.tenant, scope.stack, scope.environment, name, for_update=for_update
    )
    if row is None:
        raise ScheduleNotFound(
            f"schedule {name!r} not found in {scope.tenant}/{scope.stack}/{scope.environment}",
            {"name": name},
        )
    return row


def change_event(
    tx: Transaction,
    code: Code,
    schedule: Schedule,
    actor: str,
    verb: str,
    detail: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The event row of one schedule change, with its actor."""
    return event_values(
        code,
        tenant=schedule.tenant,
        stack=schedule.stack,
        environment=schedule.environment,
        schedule_id=schedule.id,
        schedule_name=schedule.name,
        actor=actor,
        message=f"schedule {schedule.name} {verb} by {actor}",
        now=tx.now,
        detail={"revision": schedule.revision, **(detail or {})},
    )


def schedule_event(
    tx: Transaction,
    code: Code,
    schedule: Schedule,
    actor: str,
    verb: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append the event of one schedule change, with its actor."""
    append_events(tx.conn, [change_event(tx, code, schedule, actor, verb, detail)])
