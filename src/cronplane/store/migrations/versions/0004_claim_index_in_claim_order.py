"""Claim index in the claim's order (priority DESC, available_at): a claim costs the same at any depth

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUEUED = sa.text("status = 'queued'")


def upgrade() -> None:
    op.create_index(
        "ix_queue_items_claim",
        "queue_items",
        [sa.text("priority DESC"), "available_at"],
        postgresql_where=QUEUED,
        sqlite_where=QUEUED,
    )
    op.drop_index("ix_queue_items_claimable", table_name="queue_items")


def downgrade() -> None:
    op.create_index(
        "ix_queue_items_claimable",
        "queue_items",
        ["priority", "available_at"],
        postgresql_where=QUEUED,
        sqlite_where=QUEUED,
    )
    op.drop_index("ix_queue_items_claim", table_name="queue_items")
