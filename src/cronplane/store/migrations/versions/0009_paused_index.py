"""Paused schedules: a partial index, so the alert evaluator reads only paused rows

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PAUSED = sa.text("paused_at IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_schedules_paused",
        "schedules",
        ["paused_at"],
        postgresql_where=PAUSED,
        sqlite_where=PAUSED,
    )


def downgrade() -> None:
    op.drop_index("ix_schedules_paused", table_name="schedules")
