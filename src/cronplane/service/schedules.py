"""Schedule use cases (SPEC §2): read, list, update, enable, disable, remove, record a
run, reset an app row to its manifest, and read its history; create is in
service.schedule_creates, whose rules below it shares.

Rules enforced here and nowhere else:
- everything is validated before the transaction writes anything;
- the job must exist in (tenant, stack) and be active;
- the payload defaults to the job's default payload and must match its schema;
- `last_run` is the creation time; `next_run` is the first occurrence strictly
  after max(last_run, now, start_at) and not after end_at: no back-fill on
  create or enable; disable clears it;
- a row with no occurrence left (window over, max_runs used, one-off done)
  stays enabled with `next_run` None (state `ended`/`done`); an edit that
  leaves it an occurrence (a later end_at, a higher max_runs) revives it, an
  enable recomputes and it stays ended otherwise;
- every change increments `revision`; a given stale revision is StaleRevision;
- the tenant's quotas (service.quotas): a create past max_schedules, and a
  create, cron update or enable faster than the tenant's min_interval, are
  refused inside the write transaction;
- on `app` rows an operator may change only what `core.edits` allows, and each
  change of a declarable field is remembered in `overrides`; removal is AppOwned.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

from cronplane import events
from cronplane.codes import Code
from cronplane.core import controls, validation
from cronplane.core.edits import check_fields, check_removable, operator_edit
from cronplane.core.fields import WHEN_FIELDS
from cronplane.core.inputs import SchedulePatch
from cronplane.core.model import Page, Schedule, Scope
from cronplane.core.occurrences import first_run
from cronplane.core.queries import ScheduleQuery, check_limit
from cronplane.core.reconcile import restore_declared
from cronplane.core.window import WINDOW_FIELDS, check_window, resolve_window
from cronplane.errors import (
    InvalidState,
    ScheduleNotFound,
    StaleRevision,
)
from cronplane.events import Event
from cronplane.service import quotas
from cronplane.service.base import (
    Transaction,
    active_job,
    check_revision,
    existing,
    json_value,
    schedule_event,
)
from cronplane.service.calendars import resumed, row_exclusion
from cronplane.service.paging import decode_cursor, encode_cursor
from cronplane.service.schedule_creates import ScheduleCreates
from cronplane.store import schedules as schedule_store
from cronplane.store.events import list_events

# The states of a row with no occurrence left.
ENDED_STATES = ("ended", "done")


class Schedules(ScheduleCreates):
    """Schedules: one transaction per use case, an event with its actor per change
    (creates in service.schedule_creates)."""

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

    def list_schedules(self, tenant: str, query: ScheduleQuery | None = None) -> Page:
        """One page ordered by (name, stack, environment); pass `next_cursor` in the next
        query. The cursor pages through a search's matches exactly."""
        query = (query or ScheduleQuery()).checked()
        limit = query.limit
        after = None if query.cursor is None else decode_cursor(query.cursor)
        with self._listing() as conn:
            # One extra row tells whether another page exists.
            rows = schedule_store.list_page(conn, tenant, query, after=after, limit=limit + 1)
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

        On an `app` row only `core.edits.editable("app")` may change
        (AppOwned otherwise), and each changed declarable field is added to
        `overrides`.
        """
        clean = patch.given()
        check_fields(clean, "check")  # bad input is refused before the transaction
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            return self.apply_fields(tx, row, clean, actor, revision, events.SCHEDULE_UPDATED)

    def apply_fields(
        self,
        tx: Transaction,
        row: Schedule,
        given: dict[str, Any],
        actor: str,
        revision: int | None,
        code: Code,
    ) -> Schedule:
        """An edit's checks and write of `given` on a row read for update, in the
        caller's transaction: the one path an edit and a rollback (service.versions) take."""
        # The cron is normalized later, with the row's seed; H never makes a gap under 60 s.
        checked = check_fields(given, "check")
        # The window's clean values (naive bounds are resolved in the row's zone later).
        clean: dict[str, Any] = dict(given)
        clean.update({k: checked[k] for k in (*WINDOW_FIELDS, "max_runs") if k in given})
        if "cron" in checked:
            self._check_interval(tx, row.tenant, checked["cron"])
        return self._apply(tx, row, clean, actor, revision, code)

    def enable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """Enable; next_run is computed forward from now (no back-fill). A disabled row
        faster than the tenant's min_interval quota stays disabled (IntervalUnderQuota)."""
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            if not row.enabled:
                quota = quotas.tenant_quota(tx.conn, self.context.quotas, scope.tenant)
                # Only the tenant's own limit: the platform's judges what a write sets.
                if quota.min_interval is not None:
                    quotas.check_interval(row.cron, quota, 1, scope.tenant)
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
            check_removable(row)
            schedule_store.delete_schedules(tx.conn, [row.id], change=tx.change(actor))
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
            exclusion = row_exclusion(
                tx.conn, row.tenant, row.exclude, row.on_excluded, row.timezone
            )
            following = resumed(row, max(ran, tx.now), exclusion)
            values = {"last_run": ran, "next_run": following}
            schedule_store.update_schedule(tx.conn, row.id, values)
            updated = replace(row, last_run=ran, next_run=following)
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
            return self.write_changes(tx, row, values, actor, events.SCHEDULE_RESET, "reset")

    def schedule_history(
        self, scope: Scope, name: str, *, limit: int = 50, before_id: int | None = None
    ) -> list[Event]:
        """The schedule's events (changes and the occurrence ledger), newest first."""
        check_limit(limit)
        with self._listing() as conn:
            row = existing(conn, scope, name)
            return list_events(
                conn, tenant=scope.tenant, schedule_id=row.id, before_id=before_id, limit=limit
            )

    # -- quotas ----------------------------------------------------------------

    def _check_interval(self, tx: Transaction, tenant: str, cron: str) -> None:
        quota = quotas.tenant_quota(tx.conn, self.context.quotas, tenant)
        quotas.check_interval(cron, quota, self.context.min_interval, tenant)

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
        if set(WINDOW_FIELDS) & set(given):
            # Naive bounds are wall times in the row's (new) zone.
            zone = validation.validate_zone(given.get("timezone", row.timezone))
            given = {**given, **resolve_window(given, zone)}
        changes = operator_edit(row, given)
        if not changes:
            return row
        if "job" in changes or "payload" in changes:
            job = active_job(tx.conn, row.scope, changes.get("job", row.job))
            validation.validate_against_schema(
                changes.get("payload", row.payload), job.payload_schema
            )
        verb = {
            events.SCHEDULE_ENABLED: "enabled",
            events.SCHEDULE_DISABLED: "disabled",
        }.get(code, "updated")
        return self.write_changes(tx, row, changes, actor, code, verb)

    def write_changes(
        self,
        tx: Transaction,
        row: Schedule,
        changes: dict[str, Any],
        actor: str,
        code: Code,
        verb: str,
    ) -> Schedule:
        """Write `changes` (+ next_run, revision, updated_at) and the event, in the caller's
        transaction: StaleRevision when the row moved since it was read (a promote,
        service.promotion, writes through here too)."""
        fields: dict[str, Any] = {
            key: tuple(value) if key == "overrides" else value for key, value in changes.items()
        }
        updated = replace(row, **fields)
        check_window(updated.start_at, updated.end_at)
        values = dict(changes)
        if {"cron", "jitter"} & set(changes):
            controls.check_jitter(updated.cron, updated.jitter)
        if WHEN_FIELDS & set(changes):
            # Only a change to when it runs reads its calendars (a label change reads none).
            exclusion = row_exclusion(
                tx.conn, row.tenant, updated.exclude, updated.on_excluded, updated.timezone
            )
            if {"cron", "timezone", "exclude", "on_excluded"} & set(changes):
                # The expression must fire within five years (a past one-off does not).
                first_run(
                    updated.cron, updated.timezone, tx.now, dst=updated.dst, exclusion=exclusion
                )
            offset = controls.jitter_offset(row.id, updated.jitter)
            values["jitter_offset"] = offset
            # After the last run, but never in the past: no back-fill.
            values["next_run"] = resumed(
                replace(updated, jitter_offset=offset),
                max(updated.last_run or tx.now, tx.now),
                exclusion,
            )
        values["revision"] = row.revision + 1
        values["updated_at"] = tx.now
        if not schedule_store.update_schedule(
            tx.conn, row.id, values, expected_revision=row.revision, change=tx.change(actor)
        ):
            raise StaleRevision(f"schedule {row.name!r} changed concurrently; read it again")
        updated = replace(
            updated,
            next_run=values.get("next_run", row.next_run),
            jitter_offset=values.get("jitter_offset", row.jitter_offset),
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
        if updated.state in ENDED_STATES and row.state not in ENDED_STATES:
            schedule_event(
                tx, events.SCHEDULE_ENDED, updated, actor, "ended by an edit", {"reason": "edit"}
            )
        tx.schedules_changed()
        return updated
