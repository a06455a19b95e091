"""Alert channels, rules, alerts, and the evaluator's watches and cursors."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)

from cronplane.store.tables.base import EventId, metadata
from cronplane.store.types import JSONDocument, UTCDateTime

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
    # Scope `selector` (migration 0022): the canonical selector text (core.selectors).
    Column("selector", String(2048), nullable=True),
    UniqueConstraint("tenant", "name", name="uq_alert_rules_key"),
    CheckConstraint(
        "condition IN ('failed', 'skipped', 'late', 'long', 'absent')", name="condition"
    ),
    CheckConstraint("scope IN ('schedule', 'job', 'stack', 'tenant', 'selector')", name="scope"),
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
    # The last notification delivery on each channel (targets.notify; migration 0023):
    # channel -> {state: sent|retrying|failed, at, error}. Only the delivery writes it.
    Column("deliveries", JSONDocument, nullable=False, server_default=text("'{}'")),
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
