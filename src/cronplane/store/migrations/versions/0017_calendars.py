"""Business calendars (issue 36): the calendars table, and what a schedule excludes

A schedule's `exclude` (calendar names, [] for none) and `on_excluded`
(skip | previous | next) are plain ADD COLUMNs with defaults on both
databases: every row that existed excludes nothing.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "calendars",
        sa.Column("id", sa.Uuid, primary_key=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("weekly", JSONDocument, nullable=False),
        sa.Column("dates", JSONDocument, nullable=False),
        sa.Column("holidays", sa.String(16), nullable=True),
        sa.Column("description", sa.String(500), nullable=True),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("updated_by", sa.String(128), nullable=False),
        sa.UniqueConstraint("tenant", "name", name="uq_calendars_key"),
    )
    op.add_column(
        "schedules",
        sa.Column("exclude", JSONDocument, nullable=False, server_default=sa.text("'[]'")),
    )
    op.add_column(
        "schedules",
        sa.Column("on_excluded", sa.String(8), nullable=False, server_default=sa.text("'skip'")),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE schedules DROP COLUMN on_excluded")
    op.execute("ALTER TABLE schedules DROP COLUMN exclude")
    op.drop_table("calendars")
