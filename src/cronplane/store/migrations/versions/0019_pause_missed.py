"""A pause's policy for what it passed (issue 36): schedules.paused_missed

`pause --until WHEN --missed skip|once|all` stores the choice with the pause;
the fire transaction that ends the pause at `paused_until` applies it. A plain
nullable ADD COLUMN on both databases: every existing pause keeps skipping.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
# 0019 is being added alongside: whoever merges second re-chains this onto it.
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("schedules", sa.Column("paused_missed", sa.String(8), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE schedules DROP COLUMN paused_missed")
