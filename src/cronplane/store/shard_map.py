"""The shard map, in the control database: the shards, where each tenant lives, the nodes.

core.shards says what a shard is and how leadership is shared; this module
reads and writes the control database's three tables for it. A tenant the
map does not name lives on the default shard (epoch 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, delete, select, update

from cronplane.core.shards import DEFAULT_SHARD, Shard
from cronplane.errors import InvalidShard, ShardNotFound, TenantMoving
from cronplane.store import dialects
from cronplane.store.tables import shard_nodes, shards, tenant_shards

ACTIVE = "active"
DRAINING = "draining"


@dataclass(frozen=True, slots=True)
class Place:
    """Where a tenant lives: its shard, the map's epoch for it, and a move under way."""

    tenant: str
    shard: str
    epoch: int = 0
    moving_to: str | None = None

    def write_refusal(self) -> TenantMoving | None:
        """What a write of the tenant gets while it moves (it would land on the side it
        leaves); None when it may write."""
        if self.moving_to is None:
            return None
        return TenantMoving(
            f"tenant {self.tenant!r} is moving to shard {self.moving_to!r}: retry once it has",
            {"tenant": self.tenant, "moving_to": self.moving_to},
        )


def registered(conn: Connection) -> list[Shard]:
    """The shards added beyond the default one, by name."""
    rows = conn.execute(select(shards.c.name, shards.c.url, shards.c.state).order_by(shards.c.name))
    return [Shard(row.name, row.url, row.state == DRAINING) for row in rows]


def register(conn: Connection, shard: Shard, now: datetime) -> bool:
    """Add a shard; False when it was already there with this URL (a repeat changes nothing)."""
    existing = conn.execute(select(shards.c.url).where(shards.c.name == shard.name)).first()
    if existing is not None:
        if existing.url != shard.url:
            raise InvalidShard(
                f"shard {shard.name!r} is already registered with another URL",
                {"shard": shard.name},
            )
        return False
    conn.execute(shards.insert().values(name=shard.name, url=shard.url, state=ACTIVE, added_at=now))
    return True


def set_draining(conn: Connection, name: str, draining: bool) -> None:
    """Mark a registered shard draining (it takes no tenant) or active again."""
    result = conn.execute(
        update(shards).where(shards.c.name == name).values(state=DRAINING if draining else ACTIVE)
    )
    if result.rowcount != 1:
        raise ShardNotFound(f"no shard named {name!r}", {"shard": name})


def place_of(conn: Connection, tenant: str, *, for_update: bool = False) -> Place:
    """Where `tenant` lives (the default shard when the map does not name it)."""
    query = select(tenant_shards).where(tenant_shards.c.tenant == tenant)
    row = conn.execute(query.with_for_update() if for_update else query).first()
    if row is None:
        return Place(tenant, DEFAULT_SHARD)
    return Place(tenant, row.shard, row.epoch, row.moving_to)


def places(conn: Connection) -> list[Place]:
    """Every tenant the map names, by name."""
    rows = conn.execute(select(tenant_shards).order_by(tenant_shards.c.tenant))
    return [Place(row.tenant, row.shard, row.epoch, row.moving_to) for row in rows]


def begin_move(conn: Connection, tenant: str, to: str, now: datetime) -> Place:
    """Record that `tenant` is moving to `to` (resuming one already under way to it).

    The row is locked for the transaction; a move to another shard under
    way is refused (TenantMoving), so two operators cannot race one tenant.
    """
    place = place_of(conn, tenant, for_update=True)
    if place.moving_to is not None and place.moving_to != to:
        raise TenantMoving(
            f"tenant {tenant!r} is already moving to {place.moving_to!r}",
            {"tenant": tenant, "moving_to": place.moving_to},
        )
    values = {"shard": place.shard, "epoch": place.epoch, "moving_to": to, "updated_at": now}
    insert = dialects.of(conn).insert(tenant_shards).values(tenant=tenant, **values)
    conn.execute(insert.on_conflict_do_update(index_elements=["tenant"], set_=values))
    return Place(tenant, place.shard, place.epoch, to)


def finish_move(conn: Connection, tenant: str, to: str, epoch: int, now: datetime) -> None:
    """The tenant has landed on `to`: the map names it there, at the move's epoch."""
    conn.execute(
        update(tenant_shards)
        .where(tenant_shards.c.tenant == tenant)
        .values(shard=to, epoch=epoch, moving_to=None, updated_at=now)
    )


def beat(conn: Connection, node: str, now: datetime, leads: int) -> None:
    """A node's sign of life (it competes for shard leases) and how many it leads."""
    values = {"seen_at": now, "leads": leads}
    insert = dialects.of(conn).insert(shard_nodes).values(node=node, **values)
    conn.execute(insert.on_conflict_do_update(index_elements=["node"], set_=values))


def live_leads(conn: Connection, now: datetime, ttl: timedelta) -> list[int]:
    """How many shards each node seen within one TTL leads (the caller's own included)."""
    query = select(shard_nodes.c.leads).where(shard_nodes.c.seen_at > now - ttl)
    return [int(n) for n in conn.execute(query).scalars()]


def forget(conn: Connection, node: str) -> None:
    """A node that stops: the others' share grows at once instead of after a TTL."""
    conn.execute(delete(shard_nodes).where(shard_nodes.c.node == node))
