"""The one database seam: engines, transactions, migrations and the database clock.

SQLite is the embedded default (one file, WAL, busy timeout; write
transactions begin IMMEDIATE so two writers queue instead of failing on lock
upgrade). PostgreSQL (psycopg 3) is the multi-node engine. What differs
between them is store.dialects'; any other database is refused here, when a
Database is made (UnsupportedDatabase).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from cronplane import settings
from cronplane.clock import Clock, SystemClock
from cronplane.errors import TenantMoving, Unavailable, UnsupportedDatabase
from cronplane.store import dialects
from cronplane.store.dialects import normalize_url
from cronplane.store.tables.shards import MOVED_MARK

__all__ = [
    "DEFAULT_URL",
    "Database",
    "DatabaseClock",
    "alembic_config",
    "normalize_url",
    "open_database",
    "read_replica",
    "shown_url",
]

MIGRATIONS = Path(__file__).parent / "migrations"
DEFAULT_URL = settings.DEFAULT_URL
# Connections kept for clock reads (as many again may open for a burst of them).
CLOCK_POOL = 2


class Database:
    """An engine plus the transaction rules of its dialect."""

    def __init__(
        self, url: str = DEFAULT_URL, *, pool_size: int = 5, **engine_options: Any
    ) -> None:
        self.url = normalize_url(url)
        # Raises UnsupportedDatabase before anything connects.
        self.backend = dialects.for_url(self.url)
        self.dialect = self.backend.name  # for messages; decisions ask self.backend
        # Through a transaction pooler (PgBouncer): no session state, no LISTEN.
        self.pooled = self.backend.pooled(make_url(self.url))
        self.engine = self.backend.create_engine(self.url, pool_size=pool_size, **engine_options)
        self._engine_options = engine_options
        self._clock_engine: Engine | None = None
        self._clock_lock = threading.Lock()
        self._schema_checked = False
        self._schema_lock = threading.Lock()

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """A write transaction: commits on success, rolls back on any exception.

        A row of a tenant that has left this shard is refused by the fence
        (store.tenant_moves): TenantMoving, which its caller retries where the
        tenant lives now.
        """
        try:
            with self.engine.connect() as conn:
                self.backend.begin_write(conn)
                with conn.begin():
                    yield conn
        except DBAPIError as error:
            if MOVED_MARK in str(error.orig):
                raise TenantMoving(
                    "this tenant has moved to another shard: retry, it is reached there now"
                ) from error
            raise

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only unit of work (one transaction, rolled back at the end)."""
        with self.engine.connect() as conn, conn.begin() as tx:
            yield conn
            tx.rollback()

    def refresh_statistics(self, *tables: str) -> None:
        """ANALYZE `tables` (PostgreSQL; SQLite keeps its planner's defaults)."""
        self.backend.analyze(self.engine, tables)

    def now(self) -> datetime:
        """The database's clock (PostgreSQL); the process clock for SQLite (one machine).

        Read on connections of its own: read inside a transaction from the engine's pool,
        it waited for a second connection of the pool that transaction holds one of, and
        with every connection so held each waited the pool's timeout (30 s)."""
        engine = self._clock_engine
        if engine is None:
            with self._clock_lock:
                if self._clock_engine is None:
                    self._clock_engine = self.backend.create_engine(
                        self.url, pool_size=CLOCK_POOL, **self._engine_options
                    )
                engine = self._clock_engine
        return self.backend.now(engine)

    def clock(self) -> Clock:
        """The clock a node's parts read on this database (DatabaseClock on PostgreSQL)."""
        return self.backend.clock(self)

    # -- migrations ---------------------------------------------------------

    def upgrade(self, revision: str = "head") -> None:
        """Apply migrations up to `revision` (safe to call from several processes)."""
        from alembic import command

        with self.begin() as conn:
            self.backend.lock_migrations(conn)
            config = alembic_config(conn)
            command.upgrade(config, revision)
        self._schema_checked = True

    def ping(self) -> None:
        """One round trip (`SELECT 1`); SQLAlchemyError when the database does not answer."""
        with self.read() as conn:
            conn.exec_driver_sql("SELECT 1")

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
            behind = self.backend.migrates_when_behind and current != self.head_revision()
            if current is None or behind:
                self.upgrade()
            self._schema_checked = True

    def table_names(self) -> list[str]:
        """The tables that exist (for tests and readiness)."""
        return sorted(inspect(self.engine).get_table_names())

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
        if self._clock_engine is not None:
            self._clock_engine.dispose()


def read_replica(url: str | None) -> Database | None:
    """The replica CRONPLANE_READ_URL names (None: unset), made without connecting or
    migrating: a replica is read-only, and one that is down answers its reads with
    X503001DBDOWN, not the process's start. UnsupportedDatabase (X400009DBUNSP) naming
    the variable for a URL that is no database cronplane runs on."""
    if url is None:
        return None
    try:
        return Database(url)
    except UnsupportedDatabase as error:
        detail = {**error.detail, "field": settings.READ_URL_VARIABLE}
        raise UnsupportedDatabase(
            f"{settings.READ_URL_VARIABLE}: {error.message}", detail
        ) from error


def shown_url(url: str) -> str:
    """The URL as messages show it: the password masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: UnsupportedDatabase says so elsewhere
        return url


def open_database(
    url: str, *, create: bool, announce: Callable[[str], None] | None = None
) -> Database:
    """A Database that answered one round trip, or Unavailable (X503001DBDOWN).

    The front door of commands and processes. A SQLite file in a folder that
    does not exist is unavailable; a missing file is created only when `create`
    (commands that write; `announce` is told), so a command that only reads
    never leaves a database or a folder behind. The message is one line that
    names the URL without its password.
    """
    normalized = normalize_url(url)
    shown = shown_url(normalized)
    # UnsupportedDatabase before any file is touched.
    file = dialects.for_url(normalized).database_file(make_url(normalized))
    if file and file != ":memory:" and not file.startswith("file:"):
        path = Path(file)
        if not path.parent.is_dir():
            raise Unavailable(
                f"database {shown} is unavailable: folder {path.parent} does not exist",
                {"url": shown},
            )
        if not path.exists():
            if not create:
                raise Unavailable(
                    f"database {shown} does not exist (a command that only reads creates "
                    "none; `cronplane db upgrade` makes it)",
                    {"url": shown},
                )
            if announce is not None:
                announce(f"creating a new SQLite database: {path}")
    database = Database(normalized)
    try:
        database.ping()
    except SQLAlchemyError as error:
        database.dispose()
        raise unavailable(shown, error) from error
    return database


def unavailable(shown: str, error: BaseException) -> Unavailable:
    """X503001DBDOWN naming the URL and the driver's first line of complaint."""
    cause = getattr(error, "orig", None) or error
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    reason = lines[0] if lines else type(cause).__name__
    return Unavailable(f"database {shown} is unavailable: {reason}", {"url": shown})


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
