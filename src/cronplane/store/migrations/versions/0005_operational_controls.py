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


def upgrade() -> None:
    for _name, column in _COLUMNS:
        op.add_column("schedules", column())


def downgrade() -> None:
    for name, _column in reversed(_COLUMNS):
        op.drop_column("schedules", name)
