"""One process's moving parts: a dispatcher and worker threads, started and stopped together.

`cronplane serve` runs a Node (and, once it exists, the HTTP API beside it);
`cronplane dispatcher` and `cronplane worker` run one part each. On
PostgreSQL every part reads "now" from the database (`DatabaseClock`) so
nodes with skewed clocks agree on due rows, leases and availability.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cronplane.clock import Clock
from cronplane.core.firing import Outcome
from cronplane.core.shards import DEFAULT_SHARD
from cronplane.processes.alert_loop import AlertLoop
from cronplane.processes.dispatch_reports import BatchReport, TickReport
from cronplane.processes.dispatcher import (
    DEFAULT_BATCH,
    DEFAULT_FIRE_AHEAD,
    DEFAULT_TTL,
    Dispatcher,
)
from cronplane.processes.leadership import Seat
from cronplane.processes.worker import DEFAULT_CLAIM_BATCH, Worker
from cronplane.service.housekeeping import DEFAULT_RETENTION_DAYS, ensure_system_schedules
from cronplane.settings import metrics_tenant_label
from cronplane.store.database import Database

log = logging.getLogger(__name__)


def clock_for(database: Database) -> Clock:
    """The database's clock on PostgreSQL (several nodes), the process clock on SQLite."""
    return database.clock()


# Woken for an instant, a node's other workers wake this long after the first (seconds):
# what the first leaves of the instant's items, the others take.
WAKE_OTHERS_AFTER = 0.05


@dataclass(frozen=True, slots=True)
class NodeOptions:
    """What a node runs and how."""

    dispatcher: bool = True
    workers: int = 1
    ttl: float = DEFAULT_TTL
    batch_size: int = DEFAULT_BATCH
    # Parallel fire transactions (PostgreSQL; None: the dispatcher's default).
    lanes: int | None = None
    # Seconds before an instant its rows are fired, as of it (Dispatcher.fire_ahead).
    fire_ahead: float = DEFAULT_FIRE_AHEAD
    retention_days: int = DEFAULT_RETENTION_DAYS
    # Per worker thread: targets run at once (a thread pool) and items per claim.
    concurrency: int = 1
    claim_batch: int = DEFAULT_CLAIM_BATCH
    # "thread" (default) or "process": python: targets in killable child processes.
    pool: str = "thread"
    # Running items per tenant, at most (CRONPLANE_TENANT_MAX_CONCURRENCY); None: no limit.
    tenant_limit: int | None = None
    # The alert loop (one evaluator across nodes, by its own lease).
    alerts: bool = True


class Node:
    """A dispatcher and `workers` worker threads over one database."""

    def __init__(
        self,
        database: Database,
        options: NodeOptions,
        clock: Clock | None = None,
        *,
        holder: str | None = None,
        seat: Seat | None = None,
        shard: str = DEFAULT_SHARD,
    ) -> None:
        self.database = database
        self.shard = shard
        self.options = options
        self.clock = clock or clock_for(database)
        metrics = self._metrics = _Metrics.load(shard)
        self.dispatcher = (
            Dispatcher(
                database,
                self.clock,
                ttl=options.ttl,
                batch_size=options.batch_size,
                lanes=options.lanes,
                on_tick=self._on_tick,
                fire_ahead=options.fire_ahead,
                holder=holder,
                seat=seat,
            )
            if options.dispatcher
            else None
        )
        self.workers = [
            Worker(
                database,
                self.clock,
                on_outcome=metrics.outcome if metrics else None,
                concurrency=options.concurrency,
                claim_batch=max(options.claim_batch, options.concurrency),
                pool=options.pool,
                tenant_limit=options.tenant_limit,
            )
            for _ in range(options.workers)
        ]
        self.alerts = AlertLoop(database, self.clock) if options.alerts else None
        self._threads: list[threading.Thread] = []

    def _on_tick(self, report: TickReport) -> None:
        if self._metrics is not None:
            self._metrics.tick(report)
        if report.fired:
            # Items were just enqueued: this process's workers need not wait a poll,
            # nor one past the instant they become claimable (firing ahead).
            at = min((b.decided_at for b in report.batches if b.decided_at), default=None)
            self.wake_workers(at)

    def wake(self) -> None:
        """A schedule changed in this process: wake the dispatcher (the service's on_change)."""
        if self.dispatcher is not None:
            self.dispatcher.wake()

    def wake_workers(self, at: datetime | None = None) -> None:
        """An item was enqueued in this process (run now, a fire): wake the workers
        (claimable from `at`, when given)."""
        if at is None or len(self.workers) <= 1:
            for worker in self.workers:
                worker.wake(at)
            return
        # One idle worker is woken for the instant (it reads the claim ahead and takes
        # it in parts); the others a moment later, for what it leaves: woken together,
        # they would race for the same items and each decode them.
        first = next((w for w in self.workers if w.idle()), self.workers[0])
        later = at + timedelta(seconds=WAKE_OTHERS_AFTER)
        for worker in self.workers:
            if worker is first:
                worker.wake(at)
            else:
                worker.wake(later, read_ahead=False)

    def start(self) -> None:
        """Register housekeeping and start every part in its own daemon thread."""
        if self.dispatcher is not None:
            ensure_system_schedules(
                self.database, self.clock, retention_days=self.options.retention_days
            )
            self._spawn("cronplane-dispatcher", self.dispatcher.run)
        for n, worker in enumerate(self.workers):
            self._spawn(f"cronplane-worker-{n}", worker.run)
        if self.alerts is not None:
            self._spawn("cronplane-alerts", self.alerts.run)
        log.info(
            "node started: dispatcher=%s workers=%d on %s",
            self.dispatcher is not None,
            len(self.workers),
            self.database.dialect,
        )

    def _spawn(self, name: str, target: object) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every part (the dispatcher releases its lease) and wait for the threads."""
        if self.dispatcher is not None:
            self.dispatcher.stop()
        for worker in self.workers:
            worker.stop()
        if self.alerts is not None:
            self.alerts.stop()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for thread in self._threads:
            if thread.is_alive():  # the process exits without it: say where it was
                frame = sys._current_frames().get(thread.ident or 0)
                where = "".join(traceback.format_stack(frame)) if frame else "?"
                log.warning(
                    "%s did not stop within %.0f s; it was at:\n%s", thread.name, timeout, where
                )


_SKIP_REASONS = {
    Outcome.SKIPPED_OVERLAP: "overlap",
    Outcome.SKIPPED_MISFIRE: "misfire",
    Outcome.SKIPPED_PAUSED: "paused",
    Outcome.JOB_MISSING: "job_missing",
    Outcome.CALC_FAILED: "next_run_failed",
    Outcome.SKIPPED_QUOTA: "quota",
    Outcome.SKIPPED_EXCLUDED: "excluded",
}


class _Metrics:
    """Feeds the Prometheus metrics (cronplane.api.metrics) from the loops' reports."""

    def __init__(self, module: Any, shard: str) -> None:
        self.m = module
        self.shard = shard
        # Per-tenant series (CRONPLANE_METRICS_TENANT_LABEL=1; off by default).
        self.by_tenant = metrics_tenant_label()

    @classmethod
    def load(cls, shard: str) -> _Metrics | None:
        try:
            from cronplane.api import metrics
        except ImportError:  # prometheus_client not installed: no metrics
            return None
        return cls(metrics, shard)

    def tick(self, report: TickReport) -> None:
        self.m.set_leader(report.leader, report.term, self.shard)
        for batch in report.batches:
            for scheduled_for in batch.fired_for:
                self.m.record_fire((batch.committed_at - scheduled_for).total_seconds())
            self.m.record_coalesced(batch.coalesced)
            if self.by_tenant:
                self._tenants(batch)
        for outcome, reason in _SKIP_REASONS.items():
            for _ in range(report.counts.get(outcome, 0)):
                self.m.record_skip(reason)

    def _tenants(self, batch: BatchReport) -> None:
        fired: Counter[str] = Counter()
        skipped: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for (tenant, outcome), count in batch.by_tenant().items():
            if outcome is Outcome.FIRE:
                fired[tenant] += count
            elif outcome in _SKIP_REASONS:
                skipped[tenant][_SKIP_REASONS[outcome]] += count
        for tenant in fired.keys() | skipped.keys():
            self.m.record_tenant(tenant, fired.get(tenant, 0), skipped.get(tenant, {}))

    def outcome(self, outcome: str) -> None:
        self.m.record_worker_outcome(outcome)
