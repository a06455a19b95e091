"""Shards for tests: a control database and three more, on SQLite files or PostgreSQL.

On PostgreSQL each shard is a database of its own on the local server
(created and migrated once a session, emptied for every test); on SQLite,
files copied from one migrated template.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from cronplane.core.shards import Shard
from cronplane.store import shard_map
from cronplane.store.database import Database
from cronplane.store.shard_databases import ShardDatabases
from firing_support import START
from table_support import empty_tables

SHARDS = ("s1", "s2", "s3")


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


@pytest.fixture(scope="session")
def pg_shard_urls(pg_admin_url: str) -> Iterator[list[str]]:
    """Four migrated PostgreSQL databases (control first), dropped at the end."""
    base = pg_admin_url.rsplit("/", 1)[0]
    names = [f"cp_shard_{os.getpid()}_{n}" for n in ("control", *SHARDS)]
    with psycopg.connect(_plain(pg_admin_url), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    urls = [f"{base}/{name}" for name in names]
    for url in urls:
        database = Database(url)
        database.upgrade()
        database.dispose()
    yield urls
    with psycopg.connect(_plain(pg_admin_url), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shard-template") / "template.db"
    database = Database(f"sqlite:///{path}")
    database.upgrade()
    database.dispose()
    return path


def _sqlite_urls(template: Path, where: Path) -> list[str]:
    urls = []
    for name in ("control", *SHARDS):
        path = where / f"{name}.db"
        shutil.copy(template, path)
        urls.append(f"sqlite:///{path}")
    return urls


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shard_urls(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """The control database's URL and three shards', emptied: on each database."""
    if request.param == "sqlite":
        return _sqlite_urls(request.getfixturevalue("sqlite_template"), tmp_path)
    urls: list[str] = request.getfixturevalue("pg_shard_urls")
    for url in urls:
        database = Database(url)
        empty_tables(database)
        database.dispose()
    return urls


@pytest.fixture
def databases(shard_urls: list[str]) -> Iterator[ShardDatabases]:
    """The control database with shards s1, s2 and s3 registered."""
    control = Database(shard_urls[0])
    registry = ShardDatabases(control)
    with control.begin() as conn:
        for name, url in zip(SHARDS, shard_urls[1:], strict=True):
            shard_map.register(conn, Shard(name, url), START)
    yield registry
    registry.dispose()
    control.dispose()


def each_shard(registry: ShardDatabases) -> Callable[[], list[Database]]:
    """Every shard's Database, the default first."""
    return lambda: [registry.database(shard.name) for shard in registry.shards()]
