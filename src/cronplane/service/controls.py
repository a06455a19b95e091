"""Operational controls (docs/controls.md): pause, resume and backfill a schedule.

**Pause** holds a row without disabling it: its occurrences keep coming due
and each is recorded as skipped-paused (V200100SKPPAU, with the note and who
paused) by the dispatcher. `until` ends the pause by itself: the first
occurrence at or after it fires normally and its fire transaction clears the
pause; what the pause passed is skipped, or (`missed`, given with `until` and
stored with the pause) enqueued by that same transaction exactly as a resume
`--missed` would, as of that occurrence (service.backfills.enqueue_passed). Pausing a paused row updates
its note, until, missed and paused_by (paused_at stays); resuming a row that is not
paused is a no-op that writes nothing (like enabling an enabled row).
Resuming says what the pause passed becomes (`missed`): `skip` (nothing, the
default), `once` (the latest occurrence passed, enqueued) or `all` (each one
passed, enqueued): backfill items of [paused_at, now) in the resume's own
transaction, with backfill's cap and exactly-once rules. Pause
and resume bump the revision (If-Match applies) and are never declared by a
manifest; sync never touches them.

**Backfill** enqueues one item per nominal occurrence in [from, to), source
`backfill`, in one transaction: the occurrence key (schedule_id,
scheduled_for) makes it exactly once, so an occurrence that already has an
item is reported, not enqueued. Items are claimed in order: they share a
priority and their `available_at` grows by a millisecond per occurrence.
Without `allow_overlap`, the items are exclusive (no worker starts one while
another item of the schedule runs, so they run one by one, in order), a row
with `overlap = skip` is refused (X409105BKFACT) while it has an item queued
or running, and while the backfill items are queued or running, the row's
live occurrences are skipped by the usual overlap rule. The items carry the
run controls of a fire: the job's max_concurrency, the schedule's timeout
(else the job's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cronplane import events
from cronplane.codes import Code
from cronplane.core import controls
from cronplane.core.controls import Missed
from cronplane.core.model import PAUSE_FIELDS, Schedule, Scope
from cronplane.errors import StaleRevision
from cronplane.service.backfills import (
    BackfillReport,
    check_passed_cap,
    plan_range,
    planned,
)
from cronplane.service.base import (
    Context,
    ServiceBase,
    Transaction,
    check_revision,
    existing,
    schedule_event,
)
from cronplane.service.quotas import room_in_queue, tenant_quota
from cronplane.store import schedules as schedule_store

__all__ = ["BackfillReport", "Controls"]


class Controls(ServiceBase):
    """Pause, resume and backfill: one transaction each, an event with its actor."""

    def __init__(self, context: Context, on_enqueue: Callable[[], None] | None = None) -> None:
        super().__init__(context)
        self.on_enqueue = on_enqueue

    def pause_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        until: str | None = None,
        note: str | None = None,
        revision: int | None = None,
        missed: Missed | None = None,
    ) -> Schedule:
        """Pause (or re-pause with a new note/until/missed); InvalidUntil and nothing changes
        when `until` is unparsable or not in the future (a naive instant is in the row's
        zone), or when `missed` is given without `until`; BackfillTooLarge when `missed`
        is all and [paused_at, until) holds more occurrences than a backfill may enqueue."""
        clean_note = controls.check_note(note)
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            check_revision(row, revision)
            paused_until = controls.check_until(until, row.timezone, tx.now)
            policy = controls.check_pause_missed(missed, paused_until)
            paused_at = row.paused_at or tx.now
            if policy == "all" and paused_until is not None:
                # Refused now, while someone is there to hear it, not at the pause's end.
                check_passed_cap(tx.conn, row, paused_at, paused_until)
            values = {
                "paused_at": paused_at,
                "paused_until": paused_until,
                "paused_note": clean_note,
                "paused_by": actor,
                "paused_missed": policy,
            }
            detail: dict[str, Any] = {
                "note": clean_note,
                "until": None if paused_until is None else paused_until.isoformat(),
                "repause": row.paused,
            }
            if paused_until is not None:
                detail["missed"] = policy or "skip"
            return self._save(tx, row, values, actor, events.SCHEDULE_PAUSED, "paused", detail)

    def resume_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        revision: int | None = None,
        missed: Missed = "skip",
    ) -> Schedule:
        """End a pause now; the next occurrence fires. What the pause passed is skipped,
        or (`missed`) its latest occurrence or each one is enqueued as a backfill.
        A no-op when not paused."""
        missed = controls.check_missed(missed)
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            check_revision(row, revision)
            if not row.paused or row.paused_at is None:
                return row
            plan = None
            if missed != "skip":
                # Up to now inclusive: what the dispatcher has not passed yet (at or
                # after next_run) it fires itself, and the plan leaves it out.
                first, last = controls.missed_range(row.paused_at, None, tx.now)
                plan = planned(tx.conn, row, first, last, False, latest_only=missed == "once")
                quota = tenant_quota(tx.conn, self.context.quotas, scope.tenant)
                room_in_queue(tx.conn, scope.tenant, quota, len(plan.todo))
            detail = {
                "note": row.paused_note,
                "paused_by": row.paused_by,
                "paused_at": row.paused_at.isoformat(),
                "missed": missed,
                "enqueued": 0 if plan is None else len(plan.todo),
            }
            values: dict[str, Any] = dict.fromkeys(PAUSE_FIELDS)
            resumed = self._save(tx, row, values, actor, events.SCHEDULE_RESUMED, "resumed", detail)
            if plan is not None:
                plan.enqueue(tx, actor)
        if plan is not None and plan.item_ids and self.on_enqueue is not None:
            self.on_enqueue()
        return resumed

    def _save(
        self,
        tx: Transaction,
        row: Schedule,
        values: dict[str, Any],
        actor: str,
        code: Code,
        verb: str,
        detail: dict[str, Any],
    ) -> Schedule:
        values = {**values, "revision": row.revision + 1, "updated_at": tx.now}
        if not schedule_store.update_schedule(
            tx.conn, row.id, values, expected_revision=row.revision, change=tx.change(actor)
        ):
            raise StaleRevision(f"schedule {row.name!r} changed concurrently; read it again")
        updated = replace(row, **values)
        schedule_event(tx, code, updated, actor, verb, detail)
        tx.schedules_changed()
        return updated

    def backfill_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        start: str,
        end: str,
        dry_run: bool = False,
        allow_overlap: bool = False,
    ) -> BackfillReport:
        """Enqueue the occurrences in [start, end) (see the module docstring).

        Raises InvalidBackfill (unparsable, to <= from, to in the future),
        BackfillTooLarge (over controls.MAX_BACKFILL), BackfillOverlap, JobNotFound
        or JobInactive, and then writes nothing.
        """
        if dry_run:
            with self._read() as conn:
                plan = plan_range(conn, scope, name, start, end, self.clock.now(), allow_overlap)
        else:
            with self._write() as tx:
                plan = plan_range(tx.conn, scope, name, start, end, tx.now, allow_overlap)
                quota = tenant_quota(tx.conn, self.context.quotas, scope.tenant)
                room_in_queue(tx.conn, scope.tenant, quota, len(plan.todo))
                plan.enqueue(tx, actor)
            if plan.item_ids and self.on_enqueue is not None:
                self.on_enqueue()
        return plan.report(dry_run)
