"""Writing down how a worker's runs ended: one transaction per group of outcomes.

A group's successes are one conditional UPDATE (store.outcomes), its
failures item by item: requeued after a backoff while attempts remain, or
failed; a run stopped at its timeout the same way, with its own event
(`X200202ITMTMO`); a run stopped on request `cancelled`. Every write is
conditional on the worker's lease: an item recovered meanwhile records
nothing. The events go out in one bulk insert, each written outcome's attempt
(with its output, targets.output) in one more (store.attempts), but a success
that printed nothing: its item's row holds it (core.attempts.held_by_item).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.clock import Clock
from cronplane.core.attempts import Attempt, held_by_item
from cronplane.core.backoff import RetryPolicy
from cronplane.core.model import QueueItem
from cronplane.store import attempts, cancels, outcomes, queue
from cronplane.store.database import Database
from cronplane.store.events import event_values
from cronplane.store.outcomes import append_outcome_events


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one item ended, waiting to be recorded with its group."""

    item: QueueItem
    policy: RetryPolicy
    result: Any = None
    error: str | None = None
    retry: bool = False
    # The run was stopped: "timeout" (an attempt used) or "cancelled".
    stopped: str | None = None
    # When the target was invoked and when it returned, by the worker's clock;
    # None: never invoked (a cancel before the start, a job missing).
    ran: tuple[datetime, datetime] | None = None
    # Added to a cancelled item's recorded error (a thread that ran to its end says when).
    note: str = ""
    # What the attempt printed or answered (targets.output); None: nothing.
    output: dict[str, Any] | None = None


def record(
    database: Database,
    clock: Clock,
    worker: str,
    jitter: Callable[[], float],
    group: Sequence[RunOutcome],
) -> list[str]:
    """Write a group and its events in one transaction; the kinds recorded (for metrics)."""
    if not group:
        return []
    return _Group(worker, jitter, clock.now()).write(database, group)


class _Group:
    def __init__(self, worker: str, jitter: Callable[[], float], now: datetime) -> None:
        self.name, self.jitter, self.now = worker, jitter, now
        self.rows: list[dict[str, Any]] = []
        self.attempts: list[Attempt] = []  # each outcome written, with its output

    def write(self, database: Database, group: Sequence[RunOutcome]) -> list[str]:
        now = self.now
        kinds: list[str] = []
        with database.begin() as conn:
            wins = [
                outcomes.Success(o.item.id, o.result, *(o.ran or (None, now)))
                for o in group
                if o.error is None
            ]
            done = outcomes.succeed_many(conn, wins, self.name, now)
            for o in group:
                if o.error is None and o.item.id in done:
                    message = f"{o.item.job} succeeded"
                    self.rows.append(
                        event_values(ev.ITEM_SUCCEEDED, message=message, **self._on(o))
                    )
                    kinds.append("succeeded")
                    if not held_by_item(o.ran, o.output):
                        self._attempt(o, "succeeded")
                elif o.error is not None and (kind := self._fail(conn, o)):
                    kinds.append(kind)
                    timed_out = o.stopped == "timeout" and kind != "cancelled"
                    self._attempt(o, "timeout" if timed_out else kind)
            append_outcome_events(conn, self.rows)
            attempts.add(conn, self.attempts)
        return kinds

    def _fail(self, conn: Connection, o: RunOutcome) -> str | None:
        """Requeue after a backoff, or fail for good; None when the item was no longer ours."""
        item, error, now = o.item, o.error or "", self.now
        detail: dict[str, Any] = {"error": error, "attempt": item.attempts}
        if o.stopped == "cancelled":
            return self._cancelled(conn, o)
        if o.retry and o.policy.should_retry(item.attempts):
            delay = o.policy.delay(item.attempts, self.jitter())
            retry_at = now + timedelta(seconds=delay)
            if not queue.fail(conn, item.id, self.name, now, error, retry_at, ran=o.ran):
                # Asked to stop meanwhile: not retried, cancelled.
                return self._cancelled(conn, o)
            message = f"{item.job} failed (attempt {item.attempts}); retry in {delay:.0f}s"
            detail["retry_at"] = retry_at.isoformat()
            code, kind = ev.ITEM_RETRY, "retry"
        else:
            if not queue.fail(conn, item.id, self.name, now, error, None, ran=o.ran):
                return None
            message = f"{item.job} failed after {item.attempts} attempt(s)"
            code, kind = ev.ITEM_FAILED, "failed"
        if o.stopped == "timeout":
            message = (
                f"{item.job} timed out after {item.timeout:g}s (attempt {item.attempts}); "
                + ("retry scheduled" if kind == "retry" else "failed")
            )
            detail["timeout"] = item.timeout
            code = ev.ITEM_TIMED_OUT
        self.rows.append(event_values(code, message=message, detail=detail, **self._on(o)))
        return kind

    def _cancelled(self, conn: Connection, o: RunOutcome) -> str | None:
        """Record a run stopped on request as cancelled; None when no longer ours."""
        by = cancels.finish_cancelled(conn, o.item, self.name, self.now, ran=o.ran, note=o.note)
        if by is None:
            return None
        started = o.ran is not None
        what = "stopped while running" if started else "cancelled before it started"
        self.rows.append(
            event_values(
                ev.ITEM_CANCELLED,
                message=f"{o.item.job} {what}; cancelled by {by}{o.note}",
                detail={"cancelled_by": by, "was": "running" if started else "claimed"},
                **self._on(o),
            )
        )
        return "cancelled"

    def _attempt(self, o: RunOutcome, outcome: str) -> None:
        """The attempt's row (store.attempts): its instants, end, error and output."""
        started, finished = o.ran or (None, self.now)
        error = None if o.error is None else o.error + o.note
        self.attempts.append(
            Attempt(
                o.item.id, o.item.attempts, outcome, self.name, started, finished, error, o.output
            )
        )

    def _on(self, o: RunOutcome) -> dict[str, Any]:
        """The event fields every outcome shares."""
        item = o.item
        return {
            "tenant": item.tenant,
            "stack": item.stack,
            "environment": item.environment,
            "schedule_id": item.schedule_id,
            "item_id": item.id,
            "actor": f"worker:{self.name}",
            "now": self.now,
            "scheduled_for": item.scheduled_for,
        }
