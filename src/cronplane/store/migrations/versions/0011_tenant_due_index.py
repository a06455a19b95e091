"""Fair dispatch: a partial index (tenant, next_run) of enabled schedules

Revision ID: 0011
Revises: 0009
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_schedules_tenant_due",
        "schedules",
        ["tenant", "next_run"],
        postgresql_where=sa.text("enabled"),
        sqlite_where=sa.text("enabled = 1"),
    )


def downgrade() -> None:
    op.drop_index("ix_schedules_tenant_due", table_name="schedules")
