"""An index for listing a whole tenant in (name, stack, environment) order

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_schedules_tenant_name",
        "schedules",
        ["tenant", "name", "stack", "environment"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_schedules_tenant_name", table_name="schedules")
