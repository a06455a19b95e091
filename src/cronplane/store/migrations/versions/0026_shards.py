"""Shards (issue 41): the shard map, the nodes that lead shards, and tenant moves

Empty in every database until `cronplane shard add`: a one-database install
stays one shard (the control database's own), unchanged.

The fence of a tenant that left a shard (a trigger on `schedules` and
`jobs`) is made by the first tenant that leaves (Dialect.fence_moved_tenants);
a downgrade drops it.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shards",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("added_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_shards"),
    )
    op.create_table(
        "tenant_shards",
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("shard", sa.String(64), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("moving_to", sa.String(64), nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("tenant", name="pk_tenant_shards"),
    )
    op.create_table(
        "shard_nodes",
        sa.Column("node", sa.String(128), nullable=False),
        sa.Column("seen_at", UTCDateTime(), nullable=False),
        sa.Column("leads", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("node", name="pk_shard_nodes"),
    )
    op.create_table(
        "tenant_moves",
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(4), nullable=False),
        sa.Column("peer", sa.String(64), nullable=False),
        sa.Column("rows", JSONDocument, nullable=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "epoch", "direction", name="pk_tenant_moves"),
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in ("schedules", "jobs"):
            op.execute(f"DROP TRIGGER IF EXISTS tenant_here ON {table}")
        op.execute("DROP FUNCTION IF EXISTS cronplane_tenant_here()")
    else:
        for table in ("schedules", "jobs"):
            op.execute(f"DROP TRIGGER IF EXISTS tenant_here_{table}")
    for table in ("tenant_moves", "shard_nodes", "tenant_shards", "shards"):
        op.drop_table(table)
