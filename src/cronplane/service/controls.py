"""Operational controls (docs/controls.md): pause, resume and backfill a schedule.

**Pause** holds a row without disabling it: its occurrences keep coming due
and each is recorded as skipped-paused (V200100SKPPAU, with the note and who
paused) by the dispatcher. `until` ends the pause by itself: the first
occurrence at or after it fires normally and its fire transaction clears the
pause; what the pause passed is not back-filled. Pausing a paused row updates
its note, until and paused_by (paused_at stays); resuming a row that is not
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
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events
from cronplane.codes import Code
from cronplane.core import controls
from cronplane.core.codec import to_document
from cronplane.core.controls import Missed
from cronplane.core.items import ItemOptions
from cronplane.core.model import PAUSE_FIELDS, Schedule, Scope
from cronplane.core.occurrences import next_run_function
from cronplane.errors import BackfillOverlap, CronRejected, StaleRevision
from cronplane.service.base import (
    Context,
    ServiceBase,
    Transaction,
    active_job,
    check_revision,
    existing,
    schedule_event,
)
from cronplane.service.calendars import row_exclusion
from cronplane.service.quotas import room_in_queue, tenant_quota
from cronplane.store import queue
from cronplane.store import schedules as schedule_store

# Backfill items are claimed in order: each is available this much after the previous.
BACKFILL_STEP = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class BackfillReport:
    """What a backfill did (or, with dry_run, would do)."""

    schedule: str
    start: datetime
    end: datetime
    dry_run: bool
    # Nominal occurrences in [start, end), in order, and what became of each.
    occurrences: tuple[datetime, ...]
    enqueued: tuple[datetime, ...]
    already_fired: tuple[datetime, ...]
    # At or after the row's next_run: the dispatcher's to fire, not backfill's.
    left_to_dispatcher: tuple[datetime, ...]
    item_ids: tuple[UUID, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (API, CLI `--json`)."""
        return to_document(self)


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
    ) -> Schedule:
        """Pause (or re-pause with a new note/until); InvalidUntil and nothing changes when
        `until` is unparsable or not in the future (a naive instant is in the row's zone)."""
        clean_note = controls.check_note(note)
        with self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            check_revision(row, revision)
            paused_until = controls.check_until(until, row.timezone, tx.now)
            values = {
                "paused_at": row.paused_at or tx.now,
                "paused_until": paused_until,
                "paused_note": clean_note,
                "paused_by": actor,
            }
            detail = {
                "note": clean_note,
                "until": None if paused_until is None else paused_until.isoformat(),
                "repause": row.paused,
            }
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
                until = tx.now + timedelta(microseconds=1)
                plan = _planned(
                    tx.conn, row, row.paused_at, until, False, latest_only=missed == "once"
                )
                quota = tenant_quota(tx.conn, self.context.quotas, scope.tenant)
                room_in_queue(tx.conn, scope.tenant, quota, len(plan.todo))
            detail = {
                "note": row.paused_note,
                "paused_by": row.paused_by,
                "paused_at": row.paused_at.isoformat(),
                "missed": missed,
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
                plan = _plan(conn, scope, name, start, end, self.clock.now(), allow_overlap)
        else:
            with self._write() as tx:
                plan = _plan(tx.conn, scope, name, start, end, tx.now, allow_overlap)
                quota = tenant_quota(tx.conn, self.context.quotas, scope.tenant)
                room_in_queue(tx.conn, scope.tenant, quota, len(plan.todo))
                plan.enqueue(tx, actor)
            if plan.item_ids and self.on_enqueue is not None:
                self.on_enqueue()
        return plan.report(dry_run)


@dataclass(slots=True)
class _Backfill:
    """One backfill request, planned against its row."""

    row: Schedule
    options: ItemOptions
    start: datetime
    end: datetime
    found: list[datetime]
    ours: list[datetime]
    taken: set[datetime]
    allow_overlap: bool
    item_ids: list[UUID] = field(default_factory=list)

    @property
    def todo(self) -> list[datetime]:
        return [at for at in self.ours if at not in self.taken]

    def enqueue(self, tx: Transaction, actor: str) -> None:
        """Insert the items (claimed in order) and the backfill event."""
        todo, row = self.todo, self.row
        if not todo:
            return
        rows = []
        for n, at in enumerate(todo):
            values = queue.item_values(
                tenant=row.tenant,
                stack=row.stack,
                environment=row.environment,
                job=row.job,
                payload=row.payload,
                source="backfill",
                now=tx.now,
                schedule_id=row.id,
                scheduled_for=at,
                priority=self.options.priority,
                expires_at=self.options.expires_at(tx.now),
                max_attempts=self.options.max_attempts,
                timeout=self.options.timeout,
                max_concurrency=self.options.max_concurrency,
                # Without allow_overlap no worker starts one while another of the
                # schedule runs (the claim's exclusive rule): they run one by one.
                exclusive=not self.allow_overlap,
            )
            values["available_at"] = tx.now + n * BACKFILL_STEP
            rows.append(values)
            self.item_ids.append(values["id"])
        queue.enqueue_many(tx.conn, rows)
        schedule_event(
            tx,
            events.BACKFILL_ENQUEUED,
            row,
            actor,
            f"backfilled ({len(todo)} items)",
            {
                "from": self.start.isoformat(),
                "to": self.end.isoformat(),
                "occurrences": len(self.found),
                "enqueued": len(todo),
                "already_fired": len(self.taken),
                "left_to_dispatcher": len(self.found) - len(self.ours),
                "allow_overlap": self.allow_overlap,
            },
        )

    def report(self, dry_run: bool) -> BackfillReport:
        ours = set(self.ours)
        return BackfillReport(
            self.row.name,
            self.start,
            self.end,
            dry_run,
            tuple(self.found),
            tuple(self.todo),
            tuple(at for at in self.ours if at in self.taken),
            tuple(at for at in self.found if at not in ours),
            tuple(self.item_ids),
        )


def _plan(
    conn: Connection,
    scope: Scope,
    name: str,
    start: str,
    end: str,
    now: datetime,
    allow_overlap: bool,
) -> _Backfill:
    """Check the request against its row; every refusal is raised before a write."""
    row = existing(conn, scope, name, for_update=True)
    first, last = controls.backfill_range(start, end, row.timezone, now)
    return _planned(conn, row, first, last, allow_overlap)


def _planned(
    conn: Connection,
    row: Schedule,
    first: datetime,
    last: datetime,
    allow_overlap: bool,
    *,
    latest_only: bool = False,
) -> _Backfill:
    """The occurrences of [first, last) (`latest_only`: its latest one) the dispatcher
    will not fire, against the row."""
    name = row.name
    occurrences = next_run_function(row.cron, row.timezone, row.dst)
    exclusion = row_exclusion(conn, row.tenant, row.exclude, row.on_excluded, row.timezone)
    if exclusion is not None:  # what runs: an excluded day's occurrence moved, or none
        occurrences = exclusion.running(occurrences)
    try:
        if latest_only:
            found = controls.latest_occurrence(occurrences, first, last)
        else:
            found = controls.backfill_occurrences(occurrences, first, last)
    except ValueError as error:  # a calendar with no business day near (core.excluded)
        raise CronRejected(str(error), {"field": "exclude", "cron": row.cron}) from None
    job = active_job(conn, row.scope, row.job)
    nominal_next = controls.fire_at(row.next_run, -row.jitter_offset)
    ours = [at for at in found if nominal_next is None or at < nominal_next]
    plan = _Backfill(
        row, ItemOptions.scheduled(job.options, row.timeout), first, last, found, ours,
        queue.fired_at(conn, row.id, ours), allow_overlap,
    )  # fmt: skip
    if plan.todo and not allow_overlap and row.overlap == "skip":
        active = queue.first_active(conn, row.id)
        if active is not None:
            raise BackfillOverlap(
                f"schedule {name!r} has an item {active.status} and its overlap is skip: "
                "wait for it, or allow overlap",
                {"item": str(active.id), "status": active.status},
            )
    return plan
