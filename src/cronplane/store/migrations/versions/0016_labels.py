"""A schedule's labels (issue 37): a map of Kubernetes-style keys to values, {} for none

Plain ADD COLUMN with a default on both databases (no rebuild): every row that
existed has no labels.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "schedules",
        sa.Column("labels", JSONDocument, nullable=False, server_default=sa.text("'{}'")),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE schedules DROP COLUMN labels")
