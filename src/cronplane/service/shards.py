"""Shards as an operator runs them: list, add, move a tenant, drain (`cronplane shard …`).

A move is five transactions over three databases, each recorded so that a
move interrupted anywhere resumes where it stopped (run it again):

1. control: the map marks the tenant moving (`moving_to`), locked against
   a second move;
2. old shard: its dispatch of the tenant stops and its rows leave
   (store.tenant_moves.leave, behind the lease lock);
3. new shard: the rows land, once (store.tenant_moves.land);
4. control: the map names the new shard, with the next epoch;
5. old shard: the carried copy is dropped, the record kept (the copy stays
   while items of the tenant wait there: see below).

No occurrence fires twice: from step 2's commit the old shard holds no row
of the tenant, and the new one holds none before step 3's. None is lost:
what fell due in between is still due on the new shard, and fires there
(late, by the row's own misfire rules).

**Queued items drain on the old shard**: an item, its attempts and its
ledger event were written by the old shard's fire transaction, workers
serving that shard run it and record it there, and moving it would need a
second fence against a worker's claim for an item that is due anyway. Its
job and schedule rows have left, so those workers read them from the
carried copy (store.tenant_moves.left_behind). The tenant's history (events,
finished items) stays where it happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url

from cronplane import events as ev
from cronplane.clock import Clock
from cronplane.core.quotas import Usage
from cronplane.core.shards import DEFAULT_SHARD, Shard, shard_name
from cronplane.core.validation import validate_name
from cronplane.errors import InvalidShard, ShardDraining, ShardNotFound
from cronplane.service.housekeeping import SYSTEM_TENANT
from cronplane.service.port import ControlPlane
from cronplane.store import shard_map, tenant_moves
from cronplane.store.database import Database
from cronplane.store.events import append_event
from cronplane.store.shard_databases import ShardDatabases

# The dispatcher's lease group (processes.dispatcher.DEFAULT_GROUP): a move
# waits for that lease holder's fire in flight on the shard it leaves.
DISPATCH_GROUP = "dispatcher"


@dataclass(frozen=True, slots=True)
class ShardRow:
    """A shard as `shard ls` shows it."""

    name: str
    url: str
    draining: bool
    tenants: list[str]


@dataclass(frozen=True, slots=True)
class MoveReport:
    """What a move did."""

    tenant: str
    came_from: str
    to: str
    epoch: int
    moved: bool  # False: the tenant already lived there
    rows: dict[str, int] = field(default_factory=dict)
    # Items of the tenant still queued or running on the old shard: they drain there.
    draining_items: int = 0


def every_tenant(services: Iterable[ControlPlane]) -> list[Usage]:
    """Every tenant's usage against its quota over the services of every shard, by name
    (a platform listing: the API's, the console's, `tenant ls`)."""
    found = {usage.tenant: usage for service in services for usage in service.list_tenants()}
    return [found[name] for name in sorted(found)]


class ShardService:
    """The shard map's operations, over the control database and every shard's."""

    def __init__(self, databases: ShardDatabases, clock: Clock) -> None:
        self.databases = databases
        self.clock = clock

    def shards(self) -> list[ShardRow]:
        """Every shard with the tenants living on it (by the map; unmapped: default)."""
        with self.databases.control.read() as conn:
            places = {place.tenant: place.shard for place in shard_map.places(conn)}
        rows = []
        for shard in self.databases.shards():
            with self.databases.database(shard.name).read() as conn:
                present = tenant_moves.tenants_here(conn)
            living = [t for t in present if places.get(t, DEFAULT_SHARD) == shard.name]
            mapped = [t for t, s in places.items() if s == shard.name and t not in living]
            rows.append(ShardRow(shard.name, shard.url, shard.draining, sorted(living + mapped)))
        return rows

    def add(self, name: str, url: str, *, migrate: Callable[[Database], None]) -> bool:
        """Register shard `name` at `url`, its schema migrated first; False when already there."""
        name = shard_name(name)
        if name == DEFAULT_SHARD:
            raise InvalidShard(f"{DEFAULT_SHARD!r} is the control database's own shard")
        if _same_database(url, self.databases.control.url):
            raise InvalidShard("that URL is the control database's: name another database")
        database = Database(url)
        try:
            migrate(database)
        finally:
            database.dispose()
        with self.databases.control.begin() as conn:
            return shard_map.register(conn, Shard(name, url), self.clock.now())

    def drain(self, name: str, *, to: str | None, actor: str) -> list[MoveReport]:
        """Mark a shard draining and move every tenant living on it away."""
        if name == DEFAULT_SHARD:
            raise InvalidShard(
                "the default shard holds every tenant the map does not name: move them one by one"
            )
        with self.databases.control.begin() as conn:
            shard_map.set_draining(conn, name, True)
        living = next(row for row in self.shards() if row.name == name).tenants
        reports = []
        for tenant in living:
            target = to or self._emptiest(exclude=name)
            reports.append(self.move(tenant, target, actor=actor))
        return reports

    def _emptiest(self, *, exclude: str) -> str:
        candidates = [row for row in self.shards() if row.name != exclude and not row.draining]
        if not candidates:
            raise ShardDraining("no active shard is left to move tenants onto")
        return min(candidates, key=lambda row: (len(row.tenants), row.name)).name

    def move(self, tenant: str, to: str, *, actor: str) -> MoveReport:
        """Move `tenant`'s rows to shard `to` (resuming a move under way there)."""
        tenant = validate_name(tenant, "tenant")
        if tenant == SYSTEM_TENANT:
            raise InvalidShard("the system tenant lives on every shard: it does not move")
        target = self._active(to)
        now = self.clock.now()
        with self.databases.control.begin() as conn:
            place = shard_map.place_of(conn, tenant, for_update=True)
            if place.shard == target.name and place.moving_to is None:
                return MoveReport(tenant, place.shard, target.name, place.epoch, moved=False)
            place = shard_map.begin_move(conn, tenant, target.name, now)
        epoch = place.epoch + 1
        old = self.databases.database(place.shard)
        with old.begin() as conn:
            rows = tenant_moves.leave(
                conn, tenant, epoch=epoch, to=target.name, group=DISPATCH_GROUP, now=now
            )
            counts = {name: len(table_rows) for name, table_rows in rows.items() if table_rows}
            append_event(
                conn,
                ev.TENANT_MOVED_OUT,
                tenant=tenant,
                actor=actor,
                message=f"tenant {tenant} moved to shard {target.name}",
                now=now,
                detail={"to": target.name, "epoch": epoch},
            )
            draining = tenant_moves.waiting_items(conn, tenant)
        with self.databases.database(target.name).begin() as conn:
            if tenant_moves.land(conn, tenant, rows, epoch=epoch, came_from=place.shard, now=now):
                detail = {"from": place.shard, "epoch": epoch, "rows": counts}
                append_event(
                    conn,
                    ev.TENANT_MOVED_IN,
                    tenant=tenant,
                    actor=actor,
                    message=f"tenant {tenant} moved here from shard {place.shard}",
                    now=now,
                    detail=detail,
                )
        with self.databases.control.begin() as conn:
            shard_map.finish_move(conn, tenant, target.name, epoch, now)
        with old.begin() as conn:
            tenant_moves.close_out(conn, tenant, epoch)
        return MoveReport(tenant, place.shard, target.name, epoch, True, counts, draining)

    def _active(self, name: str) -> Shard:
        found = next((shard for shard in self.databases.shards() if shard.name == name), None)
        if found is None:
            raise ShardNotFound(f"no shard named {name!r}", {"shard": name})
        if found.draining:
            raise ShardDraining(f"shard {name!r} is draining: it takes no tenant", {"shard": name})
        return found


def _same_database(url: str, other: str) -> bool:
    a, b = make_url(url), make_url(other)
    return (a.host, a.port, a.database) == (b.host, b.port, b.database)
