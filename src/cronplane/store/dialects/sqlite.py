"""SQLite: one file, one writer at a time, the process's clock."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, Table, create_engine, event
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

from cronplane.clock import Clock, SystemClock
from cronplane.store import bulk, item_rows
from cronplane.store.dialects.base import Dialect
from cronplane.store.tables.shards import FENCED_TABLES, MOVED_MARK

if TYPE_CHECKING:
    from cronplane.store.database import Database

SQLITE_BUSY_TIMEOUT_MS = 30_000


class SQLite(Dialect):
    """WAL, a busy timeout, write transactions BEGIN IMMEDIATE (two writers queue)."""

    name = "sqlite"
    driver = "pysqlite"
    parallel_fires = False  # one writer: parallel fire transactions would only queue
    server_sessions = False
    batch_migrations = True
    migrates_when_behind = True
    zoneless_datetimes = True
    defers_checkpoint = True
    files_later = True
    true_sql = "{column} = 1"
    row_encoder = bulk.SQLITE_VALUES
    params = bulk.SQLITE_VALUES

    def database_file(self, url: URL) -> str | None:
        return url.database

    def create_engine(self, url: str, *, pool_size: int, **options: Any) -> Engine:
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            poolclass=NullPool if database in (None, "", ":memory:") else None,
            **options,
        )

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy, not the driver, decide when transactions begin.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            write = conn.get_execution_options().get("cronplane_write")
            conn.exec_driver_sql(f"BEGIN {'IMMEDIATE' if write else 'DEFERRED'}")

        return engine

    def begin_write(self, conn: Connection) -> None:
        # Take the write lock at BEGIN, not at the first write (no failed lock upgrade).
        conn.execution_options(cronplane_write=True)

    def insert(self, table: Table) -> Any:
        return sqlite.insert(table)

    def clock(self, database: Database) -> Clock:
        # One machine: the process's clock is everyone's.
        return SystemClock()

    def now(self, engine: Engine) -> datetime:
        return SystemClock().now()

    def fence_moved_tenants(self, conn: Connection) -> None:
        # Made by the first tenant that leaves, not by the migration: a row trigger costs
        # every insert here about a fifth (docs/performance.md), on installs that never
        # move a tenant too. DDL is transactional: it commits with the move.
        for table in FENCED_TABLES:
            conn.exec_driver_sql(
                f"CREATE TRIGGER IF NOT EXISTS tenant_here_{table} BEFORE INSERT ON {table} "
                "WHEN (SELECT direction FROM tenant_moves WHERE tenant = NEW.tenant "
                "ORDER BY epoch DESC LIMIT 1) = 'out' "
                f"BEGIN SELECT RAISE(ABORT, '{MOVED_MARK}: tenant moved to another shard'); END"
            )

    def after_burst(self, conn: Connection) -> None:
        """Move the WAL into the database file (PASSIVE: never waits)."""
        conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    decode_items = staticmethod(item_rows.from_sqlite)
    insert_rows = staticmethod(bulk.sqlite_insert)
    update_in = staticmethod(bulk.sqlite_update_in)
    update_rows = staticmethod(bulk.sqlite_update_rows)
