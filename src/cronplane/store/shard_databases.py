"""Every shard's Database, opened once, and the one a tenant's rows live in.

The control database is the default shard's; the others are read from its
`shards` table (store.shard_map) when first asked for, so a shard added
while nodes run is reached without a restart.
"""

from __future__ import annotations

import threading

from cronplane.core.shards import DEFAULT_SHARD, Shard
from cronplane.errors import ShardNotFound
from cronplane.store import shard_map
from cronplane.store.database import Database


class ShardDatabases:
    """The control database and, by name, every shard's."""

    def __init__(self, control: Database, *, pool_size: int = 5) -> None:
        self.control = control
        self._pool_size = pool_size
        self._opened: dict[str, Database] = {DEFAULT_SHARD: control}
        self._lock = threading.Lock()

    def shards(self) -> list[Shard]:
        """Every shard, the default first (the control database's own)."""
        with self.control.read() as conn:
            added = shard_map.registered(conn)
        return [Shard(DEFAULT_SHARD, self.control.url), *added]

    def url_of(self, name: str) -> str:
        """Shard `name`'s database URL (ShardNotFound when unknown)."""
        found = next((shard for shard in self.shards() if shard.name == name), None)
        if found is None:
            raise ShardNotFound(f"no shard named {name!r}", {"shard": name})
        return found.url

    def database(self, name: str) -> Database:
        """Shard `name`'s Database (opened on first use; ShardNotFound when unknown)."""
        with self._lock:
            opened = self._opened.get(name)
        if opened is not None:
            return opened
        database = Database(self.url_of(name), pool_size=self._pool_size)
        with self._lock:
            return self._opened.setdefault(name, database)

    def place(self, tenant: str) -> shard_map.Place:
        """Where `tenant` lives, by the map (read each time: a move is seen at once)."""
        with self.control.read() as conn:
            return shard_map.place_of(conn, tenant)

    def dispose(self) -> None:
        """Close every shard's engine but the control database's (its owner closes it)."""
        with self._lock:
            others = [db for name, db in self._opened.items() if name != DEFAULT_SHARD]
            self._opened = {DEFAULT_SHARD: self.control}
        for database in others:
            database.dispose()
