"""Run now, and the queue items people look at: one transaction per use case.

**Run now** (SPEC §6) enqueues one item at once: source `manual`, priority 5,
expiring in 5 h, `scheduled_for` NULL (so it never collides with an
occurrence), and it leaves `last_run`/`next_run` alone. A running manual item
counts for the overlap rule like any other: "max one instance" means one.
:meth:`RunService.wait` polls until the item is finished, so the CLI can
report the job's own failure.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.clock import poll
from cronplane.core import validation
from cronplane.core.items import WAIT_POLL, ItemOptions
from cronplane.core.model import Job, QueueItem, Scope
from cronplane.errors import (
    InvalidState,
    ItemFinished,
    QueueItemNotFound,
    ScheduleNotFound,
)
from cronplane.service.base import Context, ServiceBase, active_job, with_selection
from cronplane.service.quotas import room_in_queue, tenant_quota
from cronplane.service.run_logs import RunLog
from cronplane.store import attempts, cancels, events, queue, summaries
from cronplane.store.events import append_event
from cronplane.store.schedules import get_by_key


class RunService(ServiceBase):
    """Run-now and queue-item use cases over the shared Context."""

    def __init__(self, context: Context, on_enqueue: Callable[[], None] | None = None) -> None:
        super().__init__(context)
        # The platform's default tenant quota: max_queued refuses a run now or retry (429).
        self.quotas = context.quotas
        # In-process workers (serve) pass their wake hook here.
        self.on_enqueue = on_enqueue

    def run_now(
        self, scope: Scope, name: str, *, actor: str, payload: dict[str, Any] | None = None
    ) -> QueueItem:
        """Enqueue the schedule's job now; next_run and last_run stay as they are.

        `payload` replaces the schedule's for this run only; it is checked like a
        schedule's (size, depth, the job's schema) and the ledger records who
        overrode it.
        """
        if payload is not None:
            payload = validation.validate_payload(payload)
        now = self.clock.now()
        with self.database.begin() as conn:
            row = get_by_key(conn, scope.tenant, scope.stack, scope.environment, name)
            if row is None:
                raise ScheduleNotFound(
                    f"schedule {name!r} not found in {scope.tenant}/{scope.stack}/{scope.environment}",
                    {"name": name},
                )
            job = active_job(conn, row.scope, row.job)
            room_in_queue(conn, row.tenant, tenant_quota(conn, self.quotas, row.tenant), 1)
            if payload is not None:
                validation.validate_against_schema(payload, job.payload_schema)
            item = _enqueue_manual(
                conn,
                now,
                job,
                environment=row.environment,
                payload=row.payload if payload is None else payload,
                schedule_id=row.id,
                schedule_name=row.name,
                schedule_timeout=row.timeout,
                actor=actor,
                message=f"run now by {actor}" + ("" if payload is None else ", payload overridden"),
                detail=with_selection(
                    None if payload is None else {"payload_overridden": True, "payload": payload}
                ),
            )
        if self.on_enqueue is not None:
            self.on_enqueue()
        return item

    def get_item(self, tenant: str, item_id: UUID) -> QueueItem:
        """One item of the tenant; QueueItemNotFound otherwise."""
        with self.database.read() as conn:
            item = queue.get(conn, item_id, tenant)
        if item is None:
            raise QueueItemNotFound(f"queue item {item_id} not found", {"id": str(item_id)})
        return item

    def item_logs(self, tenant: str, item_id: UUID) -> RunLog:
        """One item of the tenant with its attempts (their timings, errors and output)
        and its events; QueueItemNotFound otherwise."""
        with self.database.read() as conn:
            item = queue.get(conn, item_id, tenant)
            if item is None:
                raise QueueItemNotFound(f"queue item {item_id} not found", {"id": str(item_id)})
            tried = attempts.of_item(conn, item)
            seen = events.of_item(conn, tenant, item_id, item.schedule_id)
        return RunLog(item, tried, seen)

    def list_items(
        self,
        tenant: str,
        *,
        status: str | None = None,
        schedule_id: UUID | None = None,
        limit: int = 100,
    ) -> list[QueueItem]:
        """The tenant's items, newest first."""
        with self._listing() as conn:
            return queue.list_items(
                conn, tenant=tenant, status=status, schedule_id=schedule_id, limit=limit
            )

    def cancel_item(self, tenant: str, item_id: UUID, *, actor: str) -> QueueItem:
        """Cancel a queued item at once; ask a running one to stop (its worker stops it).

        ItemFinished (nothing changes) when it already finished. A running item
        already asked to stop is returned as it is.
        """
        now = self.clock.now()
        with self.database.begin() as conn:
            item = queue.get(conn, item_id, tenant)
            if item is None:
                raise QueueItemNotFound(f"queue item {item_id} not found", {"id": str(item_id)})
            changed = (
                None
                if item.finished
                else cancels.cancel_or_request(conn, item, actor=actor, now=now)
            )
            if changed is None:
                current = queue.get(conn, item_id)
                assert current is not None
                if not current.finished:  # running, its stop already requested
                    return current
                raise ItemFinished(
                    f"queue item {item_id} is {current.status}; there is nothing to cancel",
                    {"status": current.status},
                )
        return changed

    def wait(self, tenant: str, item_id: UUID, *, timeout: float | None = None) -> QueueItem:
        """Poll until the item is finished, or return it as it is after `timeout` seconds."""
        return poll(
            lambda: self.get_item(tenant, item_id),
            lambda item: item.finished,
            self.clock,
            every=WAIT_POLL,
            timeout=timeout,
        )

    # -- the console's run summaries and retry --------------------------------

    def last_items(self, tenant: str, schedule_ids: list[UUID]) -> dict[UUID, QueueItem]:
        """Each schedule's newest item (any source), for a page of rows."""
        with self._listing() as conn:
            return summaries.latest_by_schedule(conn, tenant, schedule_ids)

    def recent_items(
        self, tenant: str, schedule_ids: list[UUID], per_schedule: int = 12
    ) -> dict[UUID, list[QueueItem]]:
        """Each schedule's newest `per_schedule` items, oldest first, for a page of rows."""
        with self._listing() as conn:
            return summaries.recent_by_schedule(conn, tenant, schedule_ids, per_schedule)

    def fired_schedules(self, tenant: str, schedule_ids: list[UUID]) -> set[UUID]:
        """Which of these schedules ever fired (`last_run` alone cannot say: SPEC §2)."""
        with self._listing() as conn:
            return summaries.fired_schedules(conn, tenant, schedule_ids, ev.SCHEDULE_FIRED.text)

    def retry_item(self, tenant: str, item_id: UUID, *, actor: str) -> QueueItem:
        """Enqueue a fresh manual copy of a failed or expired item (the item itself stays)."""
        now = self.clock.now()
        with self.database.begin() as conn:
            item = queue.get(conn, item_id, tenant)
            if item is None:
                raise QueueItemNotFound(f"queue item {item_id} not found", {"id": str(item_id)})
            if item.status not in ("failed", "expired"):
                raise InvalidState(
                    f"queue item {item_id} is {item.status}; only failed or expired items can be retried",
                    {"status": item.status},
                )
            room_in_queue(conn, item.tenant, tenant_quota(conn, self.quotas, item.tenant), 1)
            retried = _enqueue_manual(
                conn,
                now,
                active_job(conn, Scope(item.tenant, item.stack), item.job),
                environment=item.environment,
                payload=item.payload,
                schedule_id=item.schedule_id,
                schedule_name=None,
                actor=actor,
                message=f"retry of item {item_id} by {actor}",
                detail={"retry_of": str(item_id)},
            )
        if self.on_enqueue is not None:
            self.on_enqueue()
        return retried


def _enqueue_manual(
    conn: Connection,
    now: datetime,
    job: Job,
    *,
    environment: str,
    payload: dict[str, Any],
    schedule_id: UUID | None,
    schedule_name: str | None,
    actor: str,
    message: str,
    detail: dict[str, Any] | None,
    schedule_timeout: int | None = None,
) -> QueueItem:
    """One manual item of `job` (run now, retry) and its run-now event, in `conn`'s transaction."""
    options = ItemOptions.manual(job.options, schedule_timeout)
    values = queue.item_values(
        tenant=job.tenant,
        stack=job.stack,
        environment=environment,
        job=job.name,
        payload=payload,
        source="manual",
        now=now,
        schedule_id=schedule_id,
        priority=options.priority,
        expires_at=options.expires_at(now),
        max_attempts=options.max_attempts,
        timeout=options.timeout,
        max_concurrency=options.max_concurrency,
    )
    item_id = queue.enqueue(conn, values)
    append_event(
        conn,
        ev.SCHEDULE_RUN_NOW,
        tenant=job.tenant,
        stack=job.stack,
        environment=environment,
        schedule_id=schedule_id,
        schedule_name=schedule_name,
        item_id=item_id,
        actor=actor,
        message=message,
        now=now,
        fired_at=now,
        detail=detail,
    )
    item = queue.get(conn, item_id)
    assert item is not None
    return item
