"""The occurrence key in time order: UNIQUE (scheduled_for, schedule_id)

A burst inserts one item per schedule at one scheduled_for. Keyed
(schedule_id, scheduled_for), those entries land all over the index, and the
pages a burst dirties grow with the table (on SQLite every dirtied page is
written whole to the WAL: the sustained seconds bench's drift). In time
order a burst appends. Lookups by schedule keep `ix_queue_items_schedule`.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "uq_queue_items_occurrence"
QUEUED = sa.text("status = 'queued'")


def _occurrence_key(columns: list[str]) -> None:
    """Make the key again on `columns` (a table rebuild on SQLite, its indexes kept)."""
    with op.batch_alter_table("queue_items") as batch:
        batch.drop_constraint(NAME, type_="unique")
        batch.create_unique_constraint(NAME, columns)
    if op.get_bind().dialect.name == "sqlite":
        # The rebuild reflects the claim index without its DESC: make it again as 0004 did.
        op.drop_index("ix_queue_items_claim", table_name="queue_items")
        op.create_index(
            "ix_queue_items_claim",
            "queue_items",
            [sa.text("priority DESC"), "available_at"],
            sqlite_where=QUEUED,
        )


def upgrade() -> None:
    _occurrence_key(["scheduled_for", "schedule_id"])


def downgrade() -> None:
    _occurrence_key(["schedule_id", "scheduled_for"])
