"""Tenant quotas: one row per tenant that overrides a platform default

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import UTCDateTime

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tenant_quotas",
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("max_schedules", sa.Integer(), nullable=True),
        sa.Column("max_jobs", sa.Integer(), nullable=True),
        sa.Column("min_interval", sa.Integer(), nullable=True),
        sa.Column("max_fires_per_minute", sa.Integer(), nullable=True),
        sa.Column("max_queued", sa.Integer(), nullable=True),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_by", sa.String(128), nullable=False),
        sa.PrimaryKeyConstraint("tenant", name="pk_tenant_quotas"),
    )


def downgrade() -> None:
    op.drop_table("tenant_quotas")
