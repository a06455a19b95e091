"""Drop ix_events_created: pruning walks events by id, so every event writes one index fewer

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_events_created", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_created", "events", ["created_at"], unique=False)
