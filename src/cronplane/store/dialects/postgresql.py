"""PostgreSQL (psycopg 3): many nodes, row locks, one clock, LISTEN/NOTIFY."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, Connection, Engine, Table, create_engine, func, literal_column, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import Select

from cronplane.store import bulk
from cronplane.store.dialects.base import Dialect, Listener

if TYPE_CHECKING:
    from cronplane.clock import Clock
    from cronplane.store.database import Database
    from cronplane.store.dispatch.fair import Fairness
    from cronplane.store.dispatch.planner import Planner
    from cronplane.store.dispatch.transaction import BatchResult

# Serializes concurrent `upgrade()` calls (pg_advisory_xact_lock key).
MIGRATION_LOCK_KEY = 0x63726F6E  # "cron"

_LOCK_KEY = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_LOCK_MIGRATIONS = text("SELECT pg_advisory_xact_lock(:key)")
_NOTIFY = text("SELECT pg_notify(:channel, '')")


class PostgreSQL(Dialect):
    """Row locks skip what another transaction holds; nodes share the database's clock."""

    name = "postgresql"
    driver = "psycopg"
    parallel_fires = True
    server_sessions = True
    batch_migrations = False
    migrates_when_behind = False  # a database in use is upgraded by `cronplane db upgrade`
    zoneless_datetimes = False
    defers_checkpoint = False
    files_later = False
    true_sql = "{column}"
    row_encoder = bulk.RowText()  # COPY text
    params = bulk.PG_VALUES

    def create_engine(self, url: str, *, pool_size: int, **options: Any) -> Engine:
        return create_engine(
            url, pool_pre_ping=True, pool_size=pool_size, max_overflow=pool_size, **options
        )

    def skip_locked(self, query: Select[Any]) -> Select[Any]:
        # A row being written is skipped, not waited for: the next look sees it.
        return query.with_for_update(skip_locked=True)

    def among(self, column: Any, chosen: CTE) -> Any:
        # `= ANY(ARRAY(…))`: an InitPlan run once, then primary-key lookups,
        # whatever the statistics say (a semi-join on a queue the planner thinks
        # empty can scan every queued row instead).
        return column == func.any(
            literal_column(f"ARRAY(SELECT {chosen.c[0].name} FROM {chosen.name})")
        )

    def insert(self, table: Table) -> Any:
        return postgresql.insert(table)

    def lock_scope(self, conn: Connection, key: str) -> None:
        conn.execute(_LOCK_KEY, {"key": key})

    def lock_migrations(self, conn: Connection) -> None:
        conn.execute(_LOCK_MIGRATIONS, {"key": MIGRATION_LOCK_KEY})

    def notify(self, conn: Connection, channel: str) -> None:
        # Delivered at commit; nothing if the transaction rolls back.
        conn.execute(_NOTIFY, {"channel": channel})

    def clock(self, database: Database) -> Clock:
        # Nodes with skewed clocks agree on due rows, leases and availability.
        from cronplane.store.database import DatabaseClock

        return DatabaseClock(database)

    def now(self, engine: Engine) -> datetime:
        with engine.connect() as conn:
            value = conn.execute(text("SELECT clock_timestamp()")).scalar_one()
        assert isinstance(value, datetime)
        return value.astimezone(UTC)

    def analyze(self, engine: Engine, tables: Sequence[str]) -> None:
        with engine.connect() as conn:
            for table in tables:
                conn.exec_driver_sql(f'ANALYZE "{table}"')
            conn.commit()

    def listener(self, database: Database, clock: Clock, on_notify: Callable[[], None]) -> Listener:
        from cronplane.store.dialects.listener import ChangeListener

        listener = ChangeListener(database, clock, on_notify=on_notify)
        listener.start()
        return listener

    def fire(
        self, conn: Connection, planner: Planner, limit: int, fairness: Fairness | None = None
    ) -> BatchResult:
        from cronplane.store.dispatch.postgresql import fire_postgresql

        return fire_postgresql(conn, planner, limit, fairness)

    insert_rows = staticmethod(bulk.pg_copy)
    update_in = staticmethod(bulk.pg_update_in)
    update_rows = staticmethod(bulk.pg_update_rows)
