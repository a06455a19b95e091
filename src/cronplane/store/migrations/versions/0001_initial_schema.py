"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import cronplane.store.types

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("token_hash", sa.String(length=128), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=False),
        sa.Column("created_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_table(
        "events",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("code", sa.String(length=16), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("stack", sa.String(length=64), nullable=True),
        sa.Column("environment", sa.String(length=64), nullable=True),
        sa.Column("schedule_id", sa.Uuid(), nullable=True),
        sa.Column("schedule_name", sa.String(length=64), nullable=True),
        sa.Column("item_id", sa.Uuid(), nullable=True),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("scheduled_for", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("fired_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "detail",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    op.create_index("ix_events_created", "events", ["created_at"], unique=False)
    op.create_index("ix_events_schedule", "events", ["schedule_id", "id"], unique=False)
    op.create_index("ix_events_tenant", "events", ["tenant", "id"], unique=False)
    op.create_table(
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("stack", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "payload_schema",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("target", sa.String(length=1024), nullable=False),
        sa.Column(
            "options",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("created_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.CheckConstraint("status IN ('active', 'inactive')", name=op.f("ck_jobs_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("tenant", "stack", "name", name="uq_jobs_key"),
    )
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=128), nullable=True),
        sa.Column("term", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("acquired_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("renewed_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "queue_items",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("stack", sa.String(length=64), nullable=False),
        sa.Column("environment", sa.String(length=64), nullable=False),
        sa.Column("job", sa.String(length=64), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("schedule_id", sa.Uuid(), nullable=True),
        sa.Column("scheduled_for", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("available_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(length=128), nullable=True),
        sa.Column("heartbeat_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "lease_expires_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column(
            "result",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("started_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("finished_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("updated_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "source IN ('schedule', 'manual', 'api')", name=op.f("ck_queue_items_source")
        ),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'succeeded', 'failed', 'expired', 'cancelled')",
            name=op.f("ck_queue_items_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queue_items")),
        sa.UniqueConstraint("schedule_id", "scheduled_for", name="uq_queue_items_occurrence"),
    )
    op.create_index(
        "ix_queue_items_claimable",
        "queue_items",
        ["priority", "available_at"],
        unique=False,
        postgresql_where=sa.text("status = 'queued'"),
        sqlite_where=sa.text("status = 'queued'"),
    )
    op.create_index(
        "ix_queue_items_schedule", "queue_items", ["schedule_id", "status"], unique=False
    )
    op.create_index("ix_queue_items_tenant", "queue_items", ["tenant", "created_at"], unique=False)
    op.create_table(
        "schedules",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("stack", sa.String(length=64), nullable=False),
        sa.Column("environment", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("job", sa.String(length=64), nullable=False),
        sa.Column("cron", sa.String(length=256), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("misfire_grace", sa.Integer(), nullable=True),
        sa.Column("overlap", sa.String(length=8), nullable=False),
        sa.Column("last_run", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("next_run", cronplane.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", cronplane.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column(
            "declared",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "overrides",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.CheckConstraint("overlap IN ('skip', 'allow')", name=op.f("ck_schedules_overlap")),
        sa.CheckConstraint("source IN ('app', 'user', 'system')", name=op.f("ck_schedules_source")),
        sa.CheckConstraint(
            "misfire_grace IS NULL OR misfire_grace >= 0", name=op.f("ck_schedules_misfire_grace")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
        sa.UniqueConstraint("tenant", "stack", "environment", "name", name="uq_schedules_key"),
    )
    op.create_index(
        "ix_schedules_due",
        "schedules",
        ["next_run"],
        unique=False,
        postgresql_where=sa.text("enabled"),
        sqlite_where=sa.text("enabled = 1"),
    )
    op.create_index("ix_schedules_job", "schedules", ["tenant", "job", "name"], unique=False)


def downgrade() -> None:

    op.drop_index("ix_schedules_job", table_name="schedules")
    op.drop_index(
        "ix_schedules_due",
        table_name="schedules",
        postgresql_where=sa.text("enabled"),
        sqlite_where=sa.text("enabled = 1"),
    )
    op.drop_table("schedules")
    op.drop_index("ix_queue_items_tenant", table_name="queue_items")
    op.drop_index("ix_queue_items_schedule", table_name="queue_items")
    op.drop_index(
        "ix_queue_items_claimable",
        table_name="queue_items",
        postgresql_where=sa.text("status = 'queued'"),
        sqlite_where=sa.text("status = 'queued'"),
    )
    op.drop_table("queue_items")
    op.drop_table("leases")
    op.drop_table("jobs")
    op.drop_index("ix_events_tenant", table_name="events")
    op.drop_index("ix_events_schedule", table_name="events")
    op.drop_index("ix_events_created", table_name="events")
    op.drop_table("events")
    op.drop_table("api_tokens")
