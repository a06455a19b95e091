"""The one database seam: engines, transactions, migrations and the database clock.

SQLite is the embedded default (one file, WAL, busy timeout; write
transactions begin IMMEDIATE so two writers queue instead of failing on lock
upgrade). PostgreSQL (psycopg 3) is the multi-node engine.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from cronplane.clock import Clock, SystemClock

MIGRATIONS = Path(__file__).parent / "migrations"
DEFAULT_URL = "sqlite:///cronplane.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
# Serializes concurrent `upgrade()` calls on PostgreSQL (pg_advisory_xact_lock key).
MIGRATION_LOCK_KEY = 0x63726F6E  # "cron"


def normalize_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` as psycopg 3 URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class Database:
    """An engine plus the transaction rules of its dialect."""

    def __init__(
        self, url: str = DEFAULT_URL, *, pool_size: int = 5, **engine_options: Any
    ) -> None:
        self.url = normalize_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            self.engine = self._sqlite_engine(**engine_options)
        elif self.dialect == "postgresql":
            self.engine = create_engine(
                self.url,
                pool_pre_ping=True,
                pool_size=pool_size,
                max_overflow=pool_size,
                **engine_options,
            )
        else:
            raise ValueError(
                f"unsupported database {parsed.get_backend_name()!r}: use sqlite or postgresql"
            )
        self._schema_checked = False
        self._schema_lock = threading.Lock()

    def _sqlite_engine(self, **engine_options: Any) -> Engine:
        database = make_url(self.url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            self.url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            poolclass=NullPool if database in (None, "", ":memory:") else None,
            **engine_options,
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
            mode = (
                "IMMEDIATE" if conn.get_execution_options().get("cronplane_write") else "DEFERRED"
            )
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """A write transaction: commits on success, rolls back on any exception."""
        with self.engine.connect() as conn:
            if self.dialect == "sqlite":
                conn.execution_options(cronplane_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only unit of work (one transaction, rolled back at the end)."""
        with self.engine.connect() as conn, conn.begin() as tx:
            yield conn
            tx.rollback()

    def refresh_statistics(self, *tables: str) -> None:
        """ANALYZE `tables` (PostgreSQL; SQLite keeps its planner's defaults)."""
        if self.dialect != "postgresql":
            return
        with self.engine.connect() as conn:
            for table in tables:
                conn.exec_driver_sql(f'ANALYZE "{table}"')
            conn.commit()

    def now(self) -> datetime:
        """The database's clock (PostgreSQL); the process clock for SQLite (one machine)."""
        if self.dialect != "postgresql":
            return SystemClock().now()
        with self.engine.connect() as conn:
            value = conn.execute(text("SELECT clock_timestamp()")).scalar_one()
        assert isinstance(value, datetime)
        return value.astimezone(UTC)

    # -- migrations ---------------------------------------------------------

    def upgrade(self, revision: str = "head") -> None:
        """Apply migrations up to `revision` (safe to call from several processes)."""
        from alembic import command

        with self.begin() as conn:
            if self.dialect == "postgresql":
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                )
            config = alembic_config(conn)
            command.upgrade(config, revision)
        self._schema_checked = True

    def current_revision(self) -> str | None:
        """The revision the database is at, or None for an empty database."""
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    def head_revision(self) -> str | None:
        """The newest revision this code knows."""
        from alembic.script import ScriptDirectory

        with self.engine.connect() as conn:
            return ScriptDirectory.from_config(alembic_config(conn)).get_current_head()

    def is_current(self) -> bool:
        """True when the schema is at the newest revision (readiness)."""
        return self.current_revision() == self.head_revision()

    def ensure_schema(self) -> None:
        """Migrate a new database by itself; a behind SQLite file too.

        A PostgreSQL database already in use is upgraded only by
        `cronplane db upgrade`, so nodes never race a migration mid-traffic.
        """
        with self._schema_lock:
            if self._schema_checked:
                return
            current = self.current_revision()
            if current is None or (self.dialect == "sqlite" and current != self.head_revision()):
                self.upgrade()
            self._schema_checked = True

    def table_names(self) -> list[str]:
        """The tables that exist (for tests and readiness)."""
        return sorted(inspect(self.engine).get_table_names())

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def alembic_config(conn: Connection) -> Any:
    """An Alembic config bound to an open connection (no alembic.ini needed)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


class DatabaseClock:
    """Now as the database sees it: one clock for every node (SPEC §6)."""

    def __init__(self, database: Database, local: Clock | None = None) -> None:
        self.database = database
        self.local = local or SystemClock()

    def now(self) -> datetime:
        return self.database.now()

    def wait(self, seconds: float, wake: threading.Event | None = None) -> bool:
        return self.local.wait(seconds, wake)

    def monotonic(self) -> float:
        return self.local.monotonic()
