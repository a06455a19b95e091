"""A schedule's DST policy (issue 36): dst_gap (shift|skip) and dst_repeat (first|both|second)

`dst_gap` is NOT NULL with the default `shift`; `dst_repeat` NULL means
Debian's choice by the expression. Both are Debian cron's rules for every
row that existed before, so no row fires differently. Plain ADD COLUMN on
both databases (no rebuild).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "schedules",
        sa.Column("dst_gap", sa.String(8), nullable=False, server_default=sa.text("'shift'")),
    )
    op.add_column("schedules", sa.Column("dst_repeat", sa.String(8), nullable=True))


def downgrade() -> None:
    for column in ("dst_repeat", "dst_gap"):
        op.execute(f"ALTER TABLE schedules DROP COLUMN {column}")
