"""Runs with their output (issue 39): item_attempts, one row per attempt that ended

Each attempt's start and end, how it ended, its error and its output (a
command's stream tails, a python target's log records, a webhook's status and
body excerpt; targets.output), written with the outcome by the worker. Items
from before this revision have no rows: their last attempt stays on the item.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "item_attempts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("item_id", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("worker", sa.String(128), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("output", JSONDocument, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_item_attempts"),
    )
    op.create_index("ix_item_attempts_item_id_attempt", "item_attempts", ["item_id", "attempt"])


def downgrade() -> None:
    op.drop_table("item_attempts")
