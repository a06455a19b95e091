"""Per-schedule indexes in two sections: `filed`, first in their key

A fire inserts one entry per schedule into `ix_queue_items_schedule` and
`ix_events_schedule`. Keyed by schedule first, those entries land all over
the index, and on SQLite (whose WAL writes every dirtied page whole) a
burst's commit grew with the tables: the sustained seconds bench's drift.
With `filed` first, SQLite's fire writes its rows unfiled, into a small
section that stays the size of what waits to be filed, and the dispatcher
files them between bursts (store.filing). Every existing row is filed.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table → (index, the columns after `filed`)
INDEXES = {
    "queue_items": ("ix_queue_items_schedule", ["schedule_id", "status"]),
    "events": ("ix_events_schedule", ["schedule_id", "id"]),
}


def upgrade() -> None:
    for table, (index, columns) in INDEXES.items():
        op.add_column(
            table, sa.Column("filed", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        op.drop_index(index, table_name=table)
        op.create_index(index, table, ["filed", *columns])


def downgrade() -> None:
    for table, (index, columns) in INDEXES.items():
        op.drop_index(index, table_name=table)
        op.create_index(index, table, columns)
        # A plain DROP COLUMN (SQLite ≥ 3.35): a batch rebuild would lose the
        # claim index's DESC (see 0012).
        op.execute(f"ALTER TABLE {table} DROP COLUMN filed")
