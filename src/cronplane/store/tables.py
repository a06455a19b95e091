"""The tables, as SQLAlchemy Core. Migrations must agree with these (tested).

Every datetime column is `UTCDateTime`. Names of constraints and indexes are
fixed here so migrations and tests can refer to them.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    false,
    text,
    true,
)

from cronplane.store.types import JSONDocument, UTCDateTime

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

# Event ids grow forever: BIGINT on PostgreSQL, INTEGER (rowid alias) on SQLite.
EventId = BigInteger().with_variant(Integer(), "sqlite")

schedules = Table(
    "schedules",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("job", String(64), nullable=False),
    Column("cron", String(256), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("source", String(8), nullable=False),
    Column("misfire_grace", Integer, nullable=True),
    Column("overlap", String(16), nullable=False),
    # Seconds an item may run; NULL: the job's `timeout` option (migration 0007).
    Column("timeout", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("revision", Integer, nullable=False),
    # For `app` rows: the manifest's last declaration, and the fields an
    # operator changed since (sync leaves those alone and reports drift).
    Column("declared", JSONDocument, nullable=True),
    Column("overrides", JSONDocument, nullable=False),
    # Jitter (seconds) and the offset applied to next_run (docs/controls.md).
    Column("jitter", Integer, nullable=True),
    Column("jitter_offset", Integer, nullable=False, server_default=text("0")),
    # An operator's pause: set by pause, cleared by resume or by the fire path.
    Column("paused_at", UTCDateTime, nullable=True),
    Column("paused_until", UTCDateTime, nullable=True),
    Column("paused_note", String(500), nullable=True),
    Column("paused_by", String(128), nullable=True),
    # The active window and run limit (migration 0006; run_count is in schedule_state).
    Column("start_at", UTCDateTime, nullable=True),
    Column("end_at", UTCDateTime, nullable=True),
    Column("max_runs", Integer, nullable=True),
    UniqueConstraint("tenant", "stack", "environment", "name", name="uq_schedules_key"),
    CheckConstraint("source IN ('app', 'user', 'system')", name="source"),
    CheckConstraint("overlap IN ('skip', 'allow', 'buffer_one', 'cancel_running')", name="overlap"),
    CheckConstraint("timeout IS NULL OR timeout > 0", name="timeout"),
    CheckConstraint("misfire_grace IS NULL OR misfire_grace >= 0", name="misfire_grace"),
    CheckConstraint("max_runs IS NULL OR max_runs >= 1", name="max_runs"),
)

# Paused rows only (the alert evaluator's "paused past a limit"): costs nothing for the rest.
Index(
    "ix_schedules_paused",
    schedules.c.paused_at,
    postgresql_where=text("paused_at IS NOT NULL"),
    sqlite_where=text("paused_at IS NOT NULL"),
)
# Listing by job within a scope (filters + keyset paging on name).
Index("ix_schedules_job", schedules.c.tenant, schedules.c.job, schedules.c.name)
# Listing a whole tenant (any stack and environment) in the listing's order,
# so a page is an index range scan instead of a sort of every tenant row.
Index(
    "ix_schedules_tenant_name",
    schedules.c.tenant,
    schedules.c.name,
    schedules.c.stack,
    schedules.c.environment,
)

# What a fire writes of a schedule (migration 0014): the enabled flag, when it
# is due, when it last fired and how often. A narrow table of its own because
# next_run is indexed, so its UPDATE is never HOT: on `schedules` it wrote an
# entry into every index (three wide text ones among them); here it writes
# the two due indexes and the key, all narrow. One row per schedule, same id;
# `tenant` is the schedule's (it never changes), copied for the fair index.
schedule_state = Table(
    "schedule_state",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("next_run", UTCDateTime, nullable=True),
    Column("last_run", UTCDateTime, nullable=True),
    # Counts fires (max_runs ends the row, core.firing; migration 0006).
    Column("run_count", Integer, nullable=False, server_default=text("0")),
)
# Due work: the dispatcher's only scan. Partial on enabled, so disabled rows cost nothing.
Index(
    "ix_schedule_state_due",
    schedule_state.c.next_run,
    postgresql_where=text("enabled"),
    sqlite_where=text("enabled = 1"),
)
# Fair dispatch (store.dispatch.fair): the tenants with due rows by a skip
# scan, then each tenant's earliest due rows. No id: on SQLite the rowid
# orders ties (and a fire's update of next_run rewrites a smaller entry: with
# the id, this index cost a 10,000-row burst 14 %, without it 4 %).
Index(
    "ix_schedule_state_tenant_due",
    schedule_state.c.tenant,
    schedule_state.c.next_run,
    postgresql_where=text("enabled"),
    sqlite_where=text("enabled = 1"),
)
# The state's columns, and a schedule as one row: every read of a whole
# schedule selects SCHEDULE_COLUMNS from SCHEDULE_ROWS (store.schedules).
STATE_FIELDS = ("enabled", "next_run", "last_run", "run_count")
SCHEDULE_ROWS = schedules.join(schedule_state, schedule_state.c.id == schedules.c.id)
SCHEDULE_COLUMNS = (*schedules.c, *(schedule_state.c[name] for name in STATE_FIELDS))

jobs = Table(
    "jobs",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("title", String(200), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("payload_schema", JSONDocument, nullable=True),
    Column("target", String(1024), nullable=False),
    # Target options (retries, timeout, queue/routing, webhook secret reference).
    Column("options", JSONDocument, nullable=False),
    Column("source", String(8), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("revision", Integer, nullable=False),
    UniqueConstraint("tenant", "stack", "name", name="uq_jobs_key"),
    CheckConstraint("status IN ('active', 'inactive')", name="status"),
)

events = Table(
    "events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("code", String(16), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=True),
    Column("environment", String(64), nullable=True),
    Column("schedule_id", Uuid, nullable=True),
    Column("schedule_name", String(64), nullable=True),
    Column("item_id", Uuid, nullable=True),
    Column("actor", String(128), nullable=False),
    Column("message", Text, nullable=False),
    Column("scheduled_for", UTCDateTime, nullable=True),
    Column("fired_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("detail", JSONDocument, nullable=False),
    # Filed in the schedule's section of ix_events_schedule yet (store.filing).
    Column("filed", Boolean, nullable=False, server_default=true()),
)
# "Did it run, and if not, why?": a schedule's ledger, newest first. Two
# sections: rows a fire wrote on SQLite wait in the small unfiled one until the
# dispatcher files them (store.filing; migration 0013).
Index("ix_events_schedule", events.c.filed, events.c.schedule_id, events.c.id)
Index("ix_events_tenant", events.c.tenant, events.c.id)
# No index on created_at: pruning deletes an id range (ids grow with time, see
# queue.prune), and each event, a fire's ledger row among them, writes one
# index fewer (migration 0003).

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

# Alerts (cronplane.alerting, migration 0008).
alert_channels = Table(
    "alert_channels",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("config", JSONDocument, nullable=False),
    # Sealed (`sealed:v1:…`, the webhook target's keyring): never answered, never logged.
    Column("secret", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant", "name", name="uq_alert_channels_key"),
    CheckConstraint("kind IN ('webhook', 'slack', 'email')", name="kind"),
)

alert_rules = Table(
    "alert_rules",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("condition", String(16), nullable=False),
    Column("scope", String(16), nullable=False),
    Column("stack", String(64), nullable=True),
    Column("environment", String(64), nullable=True),
    Column("target", String(64), nullable=True),
    Column("threshold", Integer, nullable=True),
    Column("reasons", JSONDocument, nullable=False),
    Column("channels", JSONDocument, nullable=False),
    Column("renotify", Integer, nullable=False),
    Column("source", String(8), nullable=False),
    Column("created_by", String(128), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant", "name", name="uq_alert_rules_key"),
    CheckConstraint(
        "condition IN ('failed', 'skipped', 'late', 'long', 'absent')", name="condition"
    ),
    CheckConstraint("scope IN ('schedule', 'job', 'stack', 'tenant')", name="scope"),
)
# The evaluator reads only the rules that may watch the schedules with news: those
# naming the schedule or its job, and the stack- and tenant-wide ones; and a
# condition's smallest threshold (the first entry of its range).
Index("ix_alert_rules_target", alert_rules.c.tenant, alert_rules.c.target)
Index("ix_alert_rules_scope", alert_rules.c.tenant, alert_rules.c.scope)
Index("ix_alert_rules_condition", alert_rules.c.condition, alert_rules.c.threshold)

alerts = Table(
    "alerts",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("rule_id", Uuid, nullable=False),
    Column("rule", String(64), nullable=False),
    Column("condition", String(16), nullable=False),
    Column("schedule_id", Uuid, nullable=False),
    Column("schedule", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    Column("status", String(8), nullable=False),
    Column("count", Integer, nullable=False),
    Column("opened_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("notified_at", UTCDateTime, nullable=False),
    Column("closed_at", UTCDateTime, nullable=True),
    Column("acked_at", UTCDateTime, nullable=True),
    Column("acked_by", String(128), nullable=True),
    Column("last_key", String(64), nullable=False),
    Column("detail", JSONDocument, nullable=False),
    CheckConstraint("status IN ('open', 'closed')", name="status"),
)
# One open alert per (rule, schedule), whatever two evaluators do.
Index(
    "ix_alerts_open",
    alerts.c.rule_id,
    alerts.c.schedule_id,
    unique=True,
    postgresql_where=text("status = 'open'"),
    sqlite_where=text("status = 'open'"),
)
# What clears: the open alerts of a schedule (a success), of a condition (late, long).
Index(
    "ix_alerts_open_schedule",
    alerts.c.schedule_id,
    postgresql_where=text("status = 'open'"),
    sqlite_where=text("status = 'open'"),
)
Index("ix_alerts_tenant", alerts.c.tenant, alerts.c.status, alerts.c.opened_at)

# `absent`: per (rule, schedule), the instant by which a success must have been
# recorded (the next expected occurrence + N). The evaluator walks only the
# passed deadlines (ix_alert_watches_due); a success moves its row forward.
alert_watches = Table(
    "alert_watches",
    metadata,
    Column("rule_id", Uuid, primary_key=True),
    Column("schedule_id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("due_at", UTCDateTime, nullable=False),
)
Index("ix_alert_watches_due", alert_watches.c.due_at)
Index("ix_alert_watches_schedule", alert_watches.c.schedule_id)

# The evaluator's position in the events table (one row per evaluator name).
alert_cursors = Table(
    "alert_cursors",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("event_id", EventId, nullable=False),
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
