"""Backfill items: the plan of an occurrence range against its row, and its enqueue.

Shared by every path that enqueues what a schedule did not run (docs/controls.md):
`backfill` ([from, to)), a resume `--missed once|all` (what the pause passed, up to
now) and the fire transaction that ends a pause by itself at its until
(`enqueue_passed`: what the pause passed, as of the occurrence that ended it).
One set of rules for all three: the backfill cap, exactly once per occurrence
(the occurrence key; an occurrence that has an item is reported, not enqueued),
items claimed in order, exclusive without allow_overlap, a fire's run controls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events
from cronplane.core import controls
from cronplane.core.codec import to_document
from cronplane.core.items import ItemOptions
from cronplane.core.model import Schedule, Scope
from cronplane.core.occurrences import next_run_function
from cronplane.core.quotas import Quota
from cronplane.errors import BackfillOverlap, CronplaneError, CronRejected
from cronplane.service.base import Transaction, active_job, existing, schedule_event
from cronplane.service.calendars import row_exclusion
from cronplane.service.quotas import room_in_queue, tenant_quota
from cronplane.store import queue
from cronplane.store import schedules as schedule_store
from cronplane.store.dispatch import EndedPause
from cronplane.store.dispatch.transaction import ACTOR as DISPATCHER

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


@dataclass(slots=True)
class Backfill:
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


def plan_range(
    conn: Connection,
    scope: Scope,
    name: str,
    start: str,
    end: str,
    now: datetime,
    allow_overlap: bool,
) -> Backfill:
    """Check the request against its row; every refusal is raised before a write."""
    row = existing(conn, scope, name, for_update=True)
    first, last = controls.backfill_range(start, end, row.timezone, now)
    return planned(conn, row, first, last, allow_overlap)


def planned(
    conn: Connection,
    row: Schedule,
    first: datetime,
    last: datetime,
    allow_overlap: bool,
    *,
    latest_only: bool = False,
    check_overlap: bool = True,
) -> Backfill:
    """The occurrences of [first, last) (`latest_only`: its latest one) the dispatcher
    will not fire, against the row. `check_overlap` False: no BackfillOverlap (the
    pause's own end, whose fire may have just queued an item; the items still wait,
    exclusive, for whatever of the schedule runs)."""
    found = _found(conn, row, first, last, latest_only)
    job = active_job(conn, row.scope, row.job)
    nominal_next = controls.fire_at(row.next_run, -row.jitter_offset)
    ours = [at for at in found if nominal_next is None or at < nominal_next]
    plan = Backfill(
        row, ItemOptions.scheduled(job.options, row.timeout), first, last, found, ours,
        queue.fired_at(conn, row.id, ours), allow_overlap,
    )  # fmt: skip
    if check_overlap and plan.todo and not allow_overlap and row.overlap == "skip":
        active = queue.first_active(conn, row.id)
        if active is not None:
            raise BackfillOverlap(
                f"schedule {row.name!r} has an item {active.status} and its overlap is skip: "
                "wait for it, or allow overlap",
                {"item": str(active.id), "status": active.status},
            )
    return plan


def check_passed_cap(conn: Connection, row: Schedule, paused_at: datetime, until: datetime) -> None:
    """BackfillTooLarge when the pause [paused_at, until) passes more occurrences than one
    backfill may enqueue (what `--missed all` would enqueue at its end)."""
    _found(conn, row, paused_at, until, latest_only=False)


def _found(
    conn: Connection, row: Schedule, first: datetime, last: datetime, latest_only: bool
) -> list[datetime]:
    """The row's occurrences that run (its calendars applied) in [first, last), capped."""
    occurrences = next_run_function(row.cron, row.timezone, row.dst)
    exclusion = row_exclusion(conn, row.tenant, row.exclude, row.on_excluded, row.timezone)
    if exclusion is not None:  # what runs: an excluded day's occurrence moved, or none
        occurrences = exclusion.running(occurrences)
    try:
        if latest_only:
            return controls.latest_occurrence(occurrences, first, last)
        return controls.backfill_occurrences(occurrences, first, last)
    except ValueError as error:  # a calendar with no business day near (core.excluded)
        raise CronRejected(str(error), {"field": "exclude", "cron": row.cron}) from None


def enqueue_passed(
    conn: Connection, now: datetime, ended: Sequence[EndedPause], quotas: Quota
) -> list[UUID]:
    """The last step of a fire transaction that ended pauses by themselves (their until
    reached) with a policy for what they passed: for each row, that policy applied as a
    resume `--missed` applies it, as of the occurrence that ended the pause, and a
    V200102SCHRES event (actor `dispatcher`) naming the policy and the items enqueued.

    A refusal a resume would raise (the cap after an edit, the tenant's queue quota,
    the job gone or inactive) enqueues nothing and is recorded in that event
    (`detail.refused`): the pause has ended either way and the fire stands. Exactly
    once: the fire's compare-and-set ends each pause once, and the occurrence key
    leaves out what already has an item. `quotas` is the platform's default. The ids
    of the items enqueued."""
    tx = Transaction(conn, now)
    rows = {
        row.id: row
        for row in schedule_store.by_ids(conn, [p.schedule_id for p in ended if p.schedule_id])
    }
    enqueued: list[UUID] = []
    for pause in ended:
        row = rows.get(pause.schedule_id) if pause.schedule_id is not None else None
        if row is None:
            continue
        first, last = controls.missed_range(pause.paused_at, pause.paused_until, pause.as_of)
        detail: dict[str, Any] = {
            "note": pause.paused_note,
            "paused_by": pause.paused_by,
            "paused_at": pause.paused_at.isoformat(),
            "until": None if pause.paused_until is None else pause.paused_until.isoformat(),
            "resumed": "pause until reached",
            "as_of": pause.as_of.isoformat(),
            "missed": pause.missed,
        }
        plan: Backfill | None = None
        try:
            plan = planned(
                conn, row, first, last, False,
                latest_only=pause.missed == "once", check_overlap=False,
            )  # fmt: skip
            room_in_queue(conn, row.tenant, tenant_quota(conn, quotas, row.tenant), len(plan.todo))
        except CronplaneError as refused:
            plan = None
            detail["refused"] = {"code": refused.code.text, "message": refused.message}
        detail["enqueued"] = 0 if plan is None else len(plan.todo)
        schedule_event(
            tx, events.SCHEDULE_RESUMED, row, DISPATCHER, "resumed (its until reached)", detail
        )
        if plan is not None:
            plan.enqueue(tx, DISPATCHER)
            enqueued.extend(plan.item_ids)
    return enqueued
