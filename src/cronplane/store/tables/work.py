"""Queue items, the leader lease, API tokens and tenant quotas."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    false,
    text,
    true,
)

from cronplane.store.tables.base import metadata
from cronplane.store.types import JSONDocument, UTCDateTime

queue_items = Table(
    "queue_items",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    Column("job", String(64), nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("source", String(16), nullable=False),
    Column("schedule_id", Uuid, nullable=True),
    Column("scheduled_for", UTCDateTime, nullable=True),
    Column("priority", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("available_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("attempts", Integer, nullable=False),
    Column("max_attempts", Integer, nullable=False),
    Column("lease_owner", String(128), nullable=True),
    Column("heartbeat_at", UTCDateTime, nullable=True),
    Column("lease_expires_at", UTCDateTime, nullable=True),
    Column("result", JSONDocument, nullable=True),
    Column("error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    # Run controls (migration 0007): the effective timeout, the job's
    # max_concurrency, whether the item waits for its schedule's running item,
    # and a running item's cancel request.
    Column("timeout", Float, nullable=True),
    Column("max_concurrency", Integer, nullable=True),
    Column("exclusive", Boolean, nullable=False, server_default=false()),
    Column("cancel_requested_at", UTCDateTime, nullable=True),
    Column("cancelled_by", String(128), nullable=True),
    # Filed in the schedule's section of ix_queue_items_schedule yet (store.filing).
    Column("filed", Boolean, nullable=False, server_default=true()),
    # One queue item per occurrence, whatever the leaders do. Manual runs carry
    # a NULL scheduled_for, and NULLs never collide. Time first, so a burst
    # (one scheduled_for, many schedules) appends to it (migration 0012).
    UniqueConstraint("scheduled_for", "schedule_id", name="uq_queue_items_occurrence"),
    CheckConstraint(
        "status IN ('queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled')",
        name="status",
    ),
    CheckConstraint("source IN ('schedule', 'manual', 'api', 'backfill')", name="source"),
)
# Claiming: the queued items in the claim's own order (priority DESC, then
# oldest), so a claim walks the first entries instead of sorting the queue
# (migration 0004; the ascending index made SQLite build a temporary B-tree
# and PostgreSQL sort on every claim, a cost that grew with the queue).
Index(
    "ix_queue_items_claim",
    queue_items.c.priority.desc(),
    queue_items.c.available_at,
    postgresql_where=text("status = 'queued'"),
    sqlite_where=text("status = 'queued'"),
)
# The running items of a job (a claim under max_concurrency counts them; migration 0007).
Index(
    "ix_queue_items_running",
    queue_items.c.tenant,
    queue_items.c.stack,
    queue_items.c.job,
    postgresql_where=text("status = 'running'"),
    sqlite_where=text("status = 'running'"),
)
# Overlap checks and a schedule's item history, in two sections as ix_events_schedule.
Index(
    "ix_queue_items_schedule",
    queue_items.c.filed,
    queue_items.c.schedule_id,
    queue_items.c.status,
)
Index("ix_queue_items_tenant", queue_items.c.tenant, queue_items.c.created_at)
# A worker's running items asked to stop: read just before each start (migration 0024).
Index(
    "ix_queue_items_asked",
    queue_items.c.lease_owner,
    postgresql_where=text("status = 'running' AND cancel_requested_at IS NOT NULL"),
    sqlite_where=text("status = 'running' AND cancel_requested_at IS NOT NULL"),
)

# One row per attempt that reached an outcome (migration 0021): when it ran, how it
# ended and what it printed or answered (targets.output). Written with the outcome,
# in the same transaction (processes.recorder); read by `cronplane queue logs`.
item_attempts = Table(
    "item_attempts",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("item_id", Uuid, nullable=False),
    Column("attempt", Integer, nullable=False),
    # succeeded | retry | failed | timeout | cancelled
    Column("outcome", String(16), nullable=False),
    Column("worker", String(128), nullable=False),
    Column("started_at", UTCDateTime, nullable=True),  # None: never started (cancelled)
    Column("finished_at", UTCDateTime, nullable=False),
    Column("error", Text, nullable=True),
    Column("output", JSONDocument, nullable=True),
)
Index("ix_item_attempts_item_id_attempt", item_attempts.c.item_id, item_attempts.c.attempt)

leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=True),
    # Fencing token: incremented at every takeover; every fire checks it.
    Column("term", BigInteger, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("acquired_at", UTCDateTime, nullable=True),
    Column("renewed_at", UTCDateTime, nullable=True),
)

api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Uuid, primary_key=True),
    # NULL tenant = a platform token that may span tenants.
    Column("tenant", String(64), nullable=True),
    Column("role", String(16), nullable=False),
    Column("name", String(64), nullable=False),
    Column("token_hash", String(128), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),
    Column("created_by", String(128), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
)


# `long` walks only running items by started_at: a partial index, as small as
# the queue's running part. (`late` reads the claim index's rows: the fire path
# pays for no index of its own.)
Index(
    "ix_queue_items_running_since",
    queue_items.c.started_at,
    postgresql_where=text("status = 'running'"),
    sqlite_where=text("status = 'running'"),
)

# A tenant's own quota (migration 0010): each NULL column keeps the platform's
# default (settings.quota_defaults); core.quotas names the limits.
tenant_quotas = Table(
    "tenant_quotas",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("max_schedules", Integer, nullable=True),
    Column("max_jobs", Integer, nullable=True),
    Column("min_interval", Integer, nullable=True),
    Column("max_fires_per_minute", Integer, nullable=True),
    Column("max_queued", Integer, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("updated_by", String(128), nullable=False),
)
