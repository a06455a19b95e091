"""The shards a process reaches: the control database's list, plus what its settings name.

A shard named in CRONPLANE_SHARDS (or CRONPLANE_SHARDS_FILE) is migrated and
registered when a process starts, as `cronplane shard add` would, so nodes
can be configured from the environment alone.
"""

from __future__ import annotations

import click

from cronplane.clock import SystemClock
from cronplane.service.shards import ShardService
from cronplane.settings import shards_setting
from cronplane.store.database import Database
from cronplane.store.shard_databases import ShardDatabases


def migrate(database: Database) -> None:
    """A shard's schema brought to the newest revision (created when new)."""
    database.upgrade()


def shard_databases(ctx: click.Context, control: Database) -> ShardDatabases:
    """Every shard's database reached from `control`, the configured ones registered first."""
    registry = ShardDatabases(control)
    ctx.call_on_close(registry.dispose)
    service = ShardService(registry, SystemClock())
    for shard in shards_setting():
        service.add(shard.name, shard.url, migrate=migrate)
    return registry
