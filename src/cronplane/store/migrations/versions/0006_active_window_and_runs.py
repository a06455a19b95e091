"""Schedules that come to an end: the active window (start_at, end_at) and max_runs/run_count

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import UTCDateTime

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("schedules", sa.Column("start_at", UTCDateTime(), nullable=True))
    op.add_column("schedules", sa.Column("end_at", UTCDateTime(), nullable=True))
    op.add_column("schedules", sa.Column("max_runs", sa.Integer(), nullable=True))
    op.add_column(
        "schedules",
        sa.Column("run_count", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    # SQLite cannot add a CHECK to an existing table without rebuilding it
    # (and its partial indexes); there the service's validation is the check.
    if op.get_context().dialect.name == "postgresql":
        op.create_check_constraint("max_runs", "schedules", "max_runs IS NULL OR max_runs >= 1")


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.drop_constraint("ck_schedules_max_runs", "schedules", type_="check")
    # Plain DROP COLUMN (SQLite >= 3.35): no table rebuild that could lose the
    # partial indexes.
    for column in ("run_count", "max_runs", "end_at", "start_at"):
        op.drop_column("schedules", column)
