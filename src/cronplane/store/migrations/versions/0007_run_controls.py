"""Run controls: overlap buffer_one/cancel_running, timeouts, cancel requests, max_concurrency

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import UTCDateTime

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OVERLAPS_NEW = "overlap IN ('skip', 'allow', 'buffer_one', 'cancel_running')"
OVERLAPS_OLD = "overlap IN ('skip', 'allow')"
RUNNING = sa.text("status = 'running'")


def upgrade() -> None:
    # Batch mode: SQLite changes a CHECK or a column type by copying the table.
    with op.batch_alter_table("schedules") as batch:
        batch.alter_column("overlap", type_=sa.String(16), existing_nullable=False)
        batch.drop_constraint(op.f("ck_schedules_overlap"), type_="check")
        batch.create_check_constraint("overlap", OVERLAPS_NEW)
        batch.add_column(sa.Column("timeout", sa.Integer(), nullable=True))
        batch.create_check_constraint("timeout", "timeout IS NULL OR timeout > 0")
    op.add_column("queue_items", sa.Column("timeout", sa.Float(), nullable=True))
    op.add_column("queue_items", sa.Column("max_concurrency", sa.Integer(), nullable=True))
    op.add_column(
        "queue_items",
        sa.Column("exclusive", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("queue_items", sa.Column("cancel_requested_at", UTCDateTime(), nullable=True))
    op.add_column("queue_items", sa.Column("cancelled_by", sa.String(128), nullable=True))
    op.create_index(
        "ix_queue_items_running",
        "queue_items",
        ["tenant", "stack", "job"],
        postgresql_where=RUNNING,
        sqlite_where=RUNNING,
    )


def downgrade() -> None:
    op.drop_index("ix_queue_items_running", table_name="queue_items")
    for column in (
        "cancelled_by",
        "cancel_requested_at",
        "exclusive",
        "max_concurrency",
        "timeout",
    ):
        op.drop_column("queue_items", column)
    op.execute("UPDATE schedules SET overlap = 'skip' WHERE overlap = 'buffer_one'")
    op.execute("UPDATE schedules SET overlap = 'allow' WHERE overlap = 'cancel_running'")
    with op.batch_alter_table("schedules") as batch:
        batch.drop_constraint(op.f("ck_schedules_timeout"), type_="check")
        batch.drop_column("timeout")
        batch.drop_constraint(op.f("ck_schedules_overlap"), type_="check")
        batch.create_check_constraint("overlap", OVERLAPS_OLD)
        batch.alter_column("overlap", type_=sa.String(8), existing_nullable=False)
