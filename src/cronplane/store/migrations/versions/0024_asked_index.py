"""The running items asked to stop, by the worker that holds them (ix_queue_items_asked):
a worker asks once for all of its items, just before it starts one (processes.worker)

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ASKED = "status = 'running' AND cancel_requested_at IS NOT NULL"


def upgrade() -> None:
    op.create_index(
        "ix_queue_items_asked",
        "queue_items",
        ["lease_owner"],
        postgresql_where=sa.text(_ASKED),
        sqlite_where=sa.text(_ASKED),
    )


def downgrade() -> None:
    op.drop_index("ix_queue_items_asked", table_name="queue_items")
