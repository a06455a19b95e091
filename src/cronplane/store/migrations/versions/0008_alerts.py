"""Alerts: channels, rules, alerts, absent deadlines, the evaluator's cursor; live-queue indexes

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = sa.text("status = 'open'")
EventId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "alert_channels",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("config", JSONDocument, nullable=False),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alert_channels"),
        sa.UniqueConstraint("tenant", "name", name="uq_alert_channels_key"),
        sa.CheckConstraint("kind IN ('webhook', 'slack', 'email')", name="ck_alert_channels_kind"),
    )
    op.create_table(
        "alert_rules",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("condition", sa.String(16), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("stack", sa.String(64), nullable=True),
        sa.Column("environment", sa.String(64), nullable=True),
        sa.Column("target", sa.String(64), nullable=True),
        sa.Column("threshold", sa.Integer(), nullable=True),
        sa.Column("reasons", JSONDocument, nullable=False),
        sa.Column("channels", JSONDocument, nullable=False),
        sa.Column("renotify", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("created_by", sa.String(128), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alert_rules"),
        sa.UniqueConstraint("tenant", "name", name="uq_alert_rules_key"),
        sa.CheckConstraint(
            "condition IN ('failed', 'skipped', 'late', 'long', 'absent')",
            name="ck_alert_rules_condition",
        ),
        sa.CheckConstraint(
            "scope IN ('schedule', 'job', 'stack', 'tenant')", name="ck_alert_rules_scope"
        ),
    )
    op.create_index("ix_alert_rules_target", "alert_rules", ["tenant", "target"])
    op.create_index("ix_alert_rules_scope", "alert_rules", ["tenant", "scope"])
    op.create_index("ix_alert_rules_condition", "alert_rules", ["condition", "threshold"])
    op.create_table(
        "alerts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("condition", sa.String(16), nullable=False),
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("schedule", sa.String(64), nullable=False),
        sa.Column("stack", sa.String(64), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("opened_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("notified_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("closed_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("acked_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("acked_by", sa.String(128), nullable=True),
        sa.Column("last_key", sa.String(64), nullable=False),
        sa.Column("detail", JSONDocument, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_alerts"),
        sa.CheckConstraint("status IN ('open', 'closed')", name="ck_alerts_status"),
    )
    op.create_index(
        "ix_alerts_open",
        "alerts",
        ["rule_id", "schedule_id"],
        unique=True,
        postgresql_where=OPEN,
        sqlite_where=OPEN,
    )
    op.create_index(
        "ix_alerts_open_schedule",
        "alerts",
        ["schedule_id"],
        postgresql_where=OPEN,
        sqlite_where=OPEN,
    )
    op.create_index("ix_alerts_tenant", "alerts", ["tenant", "status", "opened_at"])
    op.create_table(
        "alert_watches",
        sa.Column("rule_id", sa.Uuid(), nullable=False),
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("rule_id", "schedule_id", name="pk_alert_watches"),
    )
    op.create_index("ix_alert_watches_due", "alert_watches", ["due_at"])
    op.create_index("ix_alert_watches_schedule", "alert_watches", ["schedule_id"])
    op.create_table(
        "alert_cursors",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("event_id", EventId, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_alert_cursors"),
    )
    running = sa.text("status = 'running'")
    op.create_index(
        "ix_queue_items_running_since",
        "queue_items",
        ["started_at"],
        postgresql_where=running,
        sqlite_where=running,
    )


def downgrade() -> None:
    op.drop_index("ix_queue_items_running_since", table_name="queue_items")
    op.drop_table("alert_cursors")
    op.drop_table("alert_watches")
    op.drop_table("alerts")
    op.drop_table("alert_rules")
    op.drop_table("alert_channels")
