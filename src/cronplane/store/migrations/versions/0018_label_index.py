"""The label index (issue 37): schedule_labels, one row per label, filled from schedules

A selector over a million schedules is answered by the index
ix_schedule_labels_select (tenant, key, value, name, stack, environment,
schedule_id: the listing's order within a label value, covering) and the key (schedule_id, key), not by
reading every row's JSON. The store keeps the table
in step with `schedules.labels` on every write (store.label_index); this fills
it from the rows that exist, with each database's own JSON walk.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Each database's walk over a JSON object's pairs (labels are text to text).
PAIRS = "st_schedule_labels_pairs"
FILL = {
    "postgresql": "SELECT s.id, s.tenant, e.key, e.value, s.name, s.stack, s.environment "
    "FROM schedules AS s, jsonb_each_text(s.labels) AS e",
    "sqlite": "SELECT s.id, s.tenant, e.key, e.value, s.name, s.stack, s.environment "
    "FROM schedules AS s, json_each(s.labels) AS e",
}


def upgrade() -> None:
    op.create_table(
        "schedule_labels",
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("value", sa.String(63), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("stack", sa.String(64), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("schedule_id", "key", name="pk_schedule_labels"),
    )
    dialect = op.get_bind().dialect.name
    op.execute(
        "INSERT INTO schedule_labels (schedule_id, tenant, key, value, name, stack, environment) "
        + FILL[dialect]
    )
    op.create_index(
        "ix_schedule_labels_select",
        "schedule_labels",
        ["tenant", "key", "value", "name", "stack", "environment", "schedule_id"],
    )
    if dialect == "postgresql":
        # A (key, value) pair's share of the rows, which the planner cannot tell from
        # each column's own: without it `tier=critical` (a third of a million rows)
        # was estimated at a tenth and a page sorted 33,000 rows (2.3 s) instead of
        # walking 300 index entries.
        op.execute(
            f"CREATE STATISTICS {PAIRS} (mcv, dependencies) ON tenant, key, value "
            "FROM schedule_labels"
        )


def downgrade() -> None:
    op.drop_table("schedule_labels")
