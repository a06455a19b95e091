"""The shard map (in the control database) and each shard's record of tenant moves.

Every database has these tables (one schema everywhere); only the control
database's `shards`, `tenant_shards` and `shard_nodes` hold rows.
`tenant_moves` is written in the shards a tenant leaves and reaches
(store.tenant_moves).
"""

from __future__ import annotations

from sqlalchemy import Column, Integer, PrimaryKeyConstraint, String, Table, Text

from cronplane.store.tables.base import metadata
from cronplane.store.types import JSONDocument, UTCDateTime

# What the fence's trigger (migration 0026) says when it refuses a row of a tenant
# that has left the shard (store.tenant_moves).
MOVED_MARK = "cronplane-tenant-moved"
# The tables that fence guards: where a write creates a tenant's rows.
FENCED_TABLES = ("schedules", "jobs")

# The shards beyond the default one (the control database itself).
shards = Table(
    "shards",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("url", Text, nullable=False),
    # "active", or "draining": takes no tenant.
    Column("state", String(16), nullable=False),
    Column("added_at", UTCDateTime, nullable=False),
)

# Which shard a tenant lives on; a tenant without a row lives on the default
# shard. `epoch` grows with every move; `moving_to` is set while one runs.
tenant_shards = Table(
    "tenant_shards",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("shard", String(64), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("moving_to", String(64), nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

# The nodes that compete for shard leases, by their last sign of life: a
# node's fair share is ceil(shards / nodes seen within one TTL).
shard_nodes = Table(
    "shard_nodes",
    metadata,
    Column("node", String(128), primary_key=True),
    Column("seen_at", UTCDateTime, nullable=False),
    Column("leads", Integer, nullable=False),
)

# A move as each side saw it: on the shard left ("out"), the tenant's rows
# as they were when its dispatch stopped there (the export), until the
# shard reached holds them; on the shard reached ("in"), that they landed.
tenant_moves = Table(
    "tenant_moves",
    metadata,
    Column("tenant", String(64), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("direction", String(4), nullable=False),
    Column("peer", String(64), nullable=False),
    Column("rows", JSONDocument, nullable=True),
    Column("at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("tenant", "epoch", "direction", name="pk_tenant_moves"),
)
