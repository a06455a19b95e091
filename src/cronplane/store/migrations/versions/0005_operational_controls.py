"""Operational controls: jitter (and its offset) and an operator's pause on schedules

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Plain ADD COLUMNs on both databases (no table rebuild on SQLite).
_COLUMNS: tuple[tuple[str, Callable[[], sa.Column[Any]]], ...] = (
    ("jitter", lambda: sa.Column("jitter", sa.Integer(), nullable=True)),
    (
        "jitter_offset",
        lambda: sa.Column(
            "jitter_offset", sa.Integer(), nullable=False, server_default=sa.text("0")
        ),
    ),
    ("paused_at", lambda: sa.Column("paused_at", UTCDateTime(timezone=True), nullable=True)),
    ("paused_until", lambda: sa.Column("paused_until", UTCDateTime(timezone=True), nullable=True)),
    ("paused_note", lambda: sa.Column("paused_note", sa.String(500), nullable=True)),
    ("paused_by", lambda: sa.Column("paused_by", sa.String(128), nullable=True)),
)


SOURCES = "'schedule', 'manual', 'api'"
QUEUED = sa.text("status = 'queued'")


def _item_sources(sources: str) -> None:
    """Replace queue_items' source check (a table rebuild on SQLite, indexes kept)."""
    with op.batch_alter_table("queue_items") as batch:
        batch.drop_constraint("source", type_="check")
        batch.create_check_constraint("source", f"source IN ({sources})")
    # The rebuild reflects the claim index without its DESC: make it again as 0004 did.
    op.drop_index("ix_queue_items_claim", table_name="queue_items")
    op.create_index(
        "ix_queue_items_claim",
        "queue_items",
        [sa.text("priority DESC"), "available_at"],
        postgresql_where=QUEUED,
        sqlite_where=QUEUED,
    )


def upgrade() -> None:
    for _name, column in _COLUMNS:
        op.add_column("schedules", column())
    # Items a backfill enqueues carry source 'backfill'.
    _item_sources(SOURCES + ", 'backfill'")


def downgrade() -> None:
    op.execute("DELETE FROM queue_items WHERE source = 'backfill'")
    _item_sources(SOURCES)
    for name, _column in reversed(_COLUMNS):
        op.drop_column("schedules", name)
