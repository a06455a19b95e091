"""Prometheus metrics: what the dispatcher, the worker and the API report.

Importable without FastAPI: the dispatcher and worker call the small
functions below (``record_fire``, ``record_skip``, ``set_leader``,
``record_worker_outcome``); the API serves everything at ``/metrics``.

The installation-wide series carry no tenant label. Per tenant there are
``cronplane_tenant_fires_total{tenant}`` and
``cronplane_tenant_skips_total{tenant,reason}`` (issue 18: who fires, and
whose occurrences a quota skipped), fed only with
CRONPLANE_METRICS_TENANT_LABEL=1 (off by default: a tenant's name must not
reach an unauthenticated scrape, issue 33) and capped at MAX_TENANT_SERIES
tenants (later ones count as ``other``). /metrics is for the platform's
monitoring, not for tenants; CRONPLANE_METRICS_TOKEN makes it ask for a token. Skip reasons and worker outcomes are closed sets; an unknown value
is counted as ``other``.

Two gauges are read from the database at scrape time, so every node reports
the same truth whoever is leader: ``cronplane_due_backlog`` (enabled
schedules whose ``next_run`` has passed; the due-row index answers it) and
``cronplane_queue_items{status}`` for the active statuses (queued, running).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from cronplane.clock import Clock
    from cronplane.store.database import Database

REGISTRY: Final = CollectorRegistry(auto_describe=True)

SKIP_REASONS: Final = (
    "overlap",
    "misfire",
    "paused",
    "job_missing",
    "next_run_failed",
    "quota",
    "excluded",  # a business calendar's day (core.excluded)
)
WORKER_OUTCOMES: Final = ("succeeded", "failed", "retry", "expired")
LATENESS_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600)

FIRES: Final = Counter(
    "cronplane_fires", "Occurrences fired: queue items the dispatcher enqueued", registry=REGISTRY
)
COALESCED: Final = Counter(
    "cronplane_fires_coalesced",
    "Missed occurrences folded into a single fire (SPEC §6 coalesce)",
    registry=REGISTRY,
)
SKIPS: Final = Counter(
    "cronplane_skips",
    "Due occurrences not fired, by reason",
    ["reason"],
    registry=REGISTRY,
)
LATENESS: Final = Histogram(
    "cronplane_fire_lateness_seconds",
    "fired_at - scheduled_for of each fire",
    buckets=LATENESS_BUCKETS,
    registry=REGISTRY,
)
LEADER: Final = Gauge(
    "cronplane_leader",
    "1 while this node holds the dispatch lease (over shards: at least one), else 0",
    registry=REGISTRY,
)
SHARDS_LED: Final = Gauge(
    "cronplane_shards_led",
    "Shards whose dispatch lease this node holds (1 or 0 on a one-database install)",
    registry=REGISTRY,
)
LEADER_TERM: Final = Gauge(
    "cronplane_leader_term",
    "Fencing term of the lease this node holds or last held",
    registry=REGISTRY,
)
WORKER: Final = Counter(
    "cronplane_worker_outcomes",
    "Queue items finished by this node's worker, by outcome",
    ["outcome"],
    registry=REGISTRY,
)
HTTP_REQUESTS: Final = Counter(
    "cronplane_http_requests",
    "HTTP requests answered, by method, route template and status",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_LATENCY: Final = Histogram(
    "cronplane_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route template",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
    registry=REGISTRY,
)

TENANT_FIRES: Final = Counter(
    "cronplane_tenant_fires",
    "Occurrences fired, by tenant (only with CRONPLANE_METRICS_TENANT_LABEL=1)",
    ["tenant"],
    registry=REGISTRY,
)
TENANT_SKIPS: Final = Counter(
    "cronplane_tenant_skips",
    "Due occurrences not fired, by tenant and reason (quota: the tenant's fire-time quota)",
    ["tenant", "reason"],
    registry=REGISTRY,
)
# Tenants with series of their own; the rest are counted as `other`.
MAX_TENANT_SERIES: Final = 1_000
_TENANTS_SEEN: Final[set[str]] = set()

for _reason in (*SKIP_REASONS, "other"):
    SKIPS.labels(reason=_reason)
for _outcome in (*WORKER_OUTCOMES, "other"):
    WORKER.labels(outcome=_outcome)
LEADER.set(0)


# -- what the dispatcher and worker call --------------------------------------


def record_coalesced(count: int) -> None:
    """`count` missed occurrences were folded into fires (a catch-up after downtime)."""
    if count > 0:
        COALESCED.inc(count)


def record_fire(lateness_seconds: float, coalesced: int = 0) -> None:
    """One occurrence fired, `lateness_seconds` after it was due, folding `coalesced` missed ones."""
    FIRES.inc()
    if coalesced > 0:
        COALESCED.inc(coalesced)
    LATENESS.observe(max(0.0, lateness_seconds))


def record_skip(reason: str) -> None:
    """One due occurrence not fired: overlap, misfire, job_missing or next_run_failed."""
    SKIPS.labels(reason=reason if reason in SKIP_REASONS else "other").inc()


def _tenant_label(tenant: str) -> str:
    if tenant in _TENANTS_SEEN:
        return tenant
    if len(_TENANTS_SEEN) >= MAX_TENANT_SERIES:
        return "other"
    _TENANTS_SEEN.add(tenant)
    return tenant


def record_tenant(tenant: str, fired: int, skipped: dict[str, int]) -> None:
    """A tenant's fires and skips (reason → count) in one fire batch."""
    label = _tenant_label(tenant)
    if fired:
        TENANT_FIRES.labels(tenant=label).inc(fired)
    for reason, count in skipped.items():
        if count:
            reason = reason if reason in SKIP_REASONS else "other"
            TENANT_SKIPS.labels(tenant=label, reason=reason).inc(count)


# Over shards, each shard's dispatcher reports its own lease (processes.shard_node).
_LEADING: dict[str, bool] = {}
_LEADING_LOCK = threading.Lock()


def set_leader(leading: bool, term: int | None = None, shard: str = "default") -> None:
    """This node took (True) or lost (False) `shard`'s lease; `term` is its fencing token
    (the term shown is the default shard's: one series, as on a one-database install)."""
    with _LEADING_LOCK:
        _LEADING[shard] = leading
        led = sum(_LEADING.values())
    LEADER.set(1 if led else 0)
    SHARDS_LED.set(led)
    if term is not None and shard == "default":
        LEADER_TERM.set(term)


def record_worker_outcome(outcome: str) -> None:
    """One queue item finished: succeeded, failed, retry or expired."""
    WORKER.labels(outcome=outcome if outcome in WORKER_OUTCOMES else "other").inc()


CREATE_GROUPS: Final = Histogram(
    "cronplane_api_create_group_size",
    "Single creates committed together in one transaction (API group commit)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128),
    registry=REGISTRY,
)


def observe_create_group(size: int) -> None:
    """One group of API creates handed to a single transaction."""
    CREATE_GROUPS.observe(size)


# (method, route, status) -> its two series; `labels()` validates and locks
# on every call, which showed in a create's profile. Bounded like the series.
_REQUEST_SERIES: Final[dict[tuple[str, str, int], tuple[Counter, Histogram]]] = {}
_MAX_REQUEST_SERIES: Final = 10_000


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """One HTTP request answered (the API's middleware calls this)."""
    key = (method, route, status)
    series = _REQUEST_SERIES.get(key)
    if series is None:
        series = (
            HTTP_REQUESTS.labels(method=method, route=route, status=str(status)),
            HTTP_LATENCY.labels(method=method, route=route),
        )
        if len(_REQUEST_SERIES) < _MAX_REQUEST_SERIES:
            _REQUEST_SERIES[key] = series
    series[0].inc()
    series[1].observe(seconds)


# -- read at scrape time ------------------------------------------------------


# The fixed label set of `cronplane_schedules`: the state only. A schedule's user
# labels (issue 37) never become metric labels: their keys and values are
# unbounded (every tenant picks its own), and each distinct set would be a
# series of its own in Prometheus, whose memory grows with series, not samples.
SCHEDULE_LABELS: Final = ("state",)


class DatabaseGauges(Collector):
    """Due backlog, schedules by state, active queue depth and open alerts by their last
    notification, counted when scraped."""

    def __init__(self, database: Database, clock: Clock) -> None:
        self.database = database
        self.clock = clock

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from sqlalchemy.exc import SQLAlchemyError

        from cronplane.store import queue
        from cronplane.store.alert_deliveries import open_by_delivery
        from cronplane.store.dispatch import count_due
        from cronplane.store.schedule_counts import count_states

        up = GaugeMetricFamily("cronplane_database_up", "1 when the scrape reached the database")
        backlog = GaugeMetricFamily(
            "cronplane_due_backlog", "Enabled schedules whose next_run has passed"
        )
        depth = GaugeMetricFamily(
            "cronplane_queue_items", "Queue items by active status", labels=["status"]
        )
        states = GaugeMetricFamily(
            "cronplane_schedules", "Schedules by state", labels=list(SCHEDULE_LABELS)
        )
        deliveries = GaugeMetricFamily(
            "cronplane_open_alerts_by_delivery",
            "Open alerts by their last notification: sent, retrying, failed, none",
            labels=["delivery"],
        )
        now: datetime = self.clock.now()
        try:
            with self.database.read() as conn:
                # What "due" means is the dispatcher's own (store.dispatch).
                due = count_due(conn, now)
                counts = queue.count_active(conn)
                by_state = count_states(conn)
                by_delivery = open_by_delivery(conn)
        except SQLAlchemyError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        backlog.add_metric([], due)
        for status, count in counts.items():
            depth.add_metric([status], count)
        for state, count in by_state.items():
            states.add_metric([state], count)
        for delivery, count in by_delivery.items():
            deliveries.add_metric([delivery], count)
        yield up
        yield backlog
        yield states
        yield depth
        yield deliveries


def exposition(database: Database | None = None, clock: Clock | None = None) -> bytes:
    """The text exposition: process-wide metrics, plus the database gauges when given."""
    text = generate_latest(REGISTRY)
    if database is not None and clock is not None:
        scrape = CollectorRegistry(auto_describe=False)
        scrape.register(DatabaseGauges(database, clock))
        text += generate_latest(scrape)
    return text
