"""An alert's last notification delivery on each of its channels: state (sent, retrying,
failed), when, and a failed one's error (alerts.deliveries: channel -> that; {} before
any was tried)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "alerts",
        sa.Column("deliveries", JSONDocument, nullable=False, server_default=sa.text("'{}'")),
    )


def downgrade() -> None:
    with op.batch_alter_table("alerts") as batch:
        batch.drop_column("deliveries")
