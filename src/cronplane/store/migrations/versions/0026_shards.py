"""Shards (issue 41): the shard map, the nodes that lead shards, and tenant moves

Empty in every database until `cronplane shard add`: a one-database install
stays one shard (the control database's own), unchanged.

The fence of a tenant that left a shard (store.tenant_moves): a trigger on
the tables a write creates a tenant's rows in refuses the row when the
tenant's latest move here is "out", so a writer that read the map before the
move cannot leave a schedule behind that would fire here. On PostgreSQL it
first takes the tenant's advisory lock shared; `leave` takes it exclusively,
so a write and a move of one tenant are serialized (SQLite has one writer).

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

    _fence()


# The tables a write creates a tenant's rows in, whose rows a move carries.
FENCED = ("schedules", "jobs")
MARK = "cronplane-tenant-moved"  # store.tables.shards.MOVED_MARK, frozen here
_LATEST = (
    "(SELECT direction FROM tenant_moves WHERE tenant = NEW.tenant ORDER BY epoch DESC LIMIT 1)"
)


def _fence() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"""
            CREATE FUNCTION cronplane_tenant_here() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock_shared(
                    hashtextextended('cronplane-tenant/' || NEW.tenant, 0));
                IF {_LATEST} = 'out' THEN
                    RAISE EXCEPTION '{MARK}: tenant % moved to another shard', NEW.tenant;
                END IF;
                RETURN NEW;
            END $$"""
        )
        for table in FENCED:
            op.execute(
                f"CREATE TRIGGER tenant_here BEFORE INSERT ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION cronplane_tenant_here()"
            )
        return
    for table in FENCED:
        op.execute(
            f"CREATE TRIGGER tenant_here_{table} BEFORE INSERT ON {table} "
            f"WHEN {_LATEST} = 'out' "
            f"BEGIN SELECT RAISE(ABORT, '{MARK}: tenant moved to another shard'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in FENCED:
            op.execute(f"DROP TRIGGER tenant_here ON {table}")
        op.execute("DROP FUNCTION cronplane_tenant_here()")
    else:
        for table in FENCED:
            op.execute(f"DROP TRIGGER tenant_here_{table}")
    for table in ("tenant_moves", "shard_nodes", "tenant_shards", "shards"):
        op.drop_table(table)
