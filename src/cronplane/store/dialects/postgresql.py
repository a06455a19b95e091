"""PostgreSQL (psycopg 3): many nodes, row locks, one clock, LISTEN/NOTIFY.

Behind a transaction-pooling PgBouncer (the URL says so: `?pgbouncer=true`)
each transaction may run on another server session, so nothing here keeps
state in a session: locks are transaction advisory locks, settings are
`set_config(…, true)`; psycopg prepares no statement (PgBouncer before 1.21
cannot carry them); and the dispatcher listens for NOTIFY only on a direct
connection (CRONPLANE_LISTEN_URL), polling otherwise (docs/operations.md,
"Through PgBouncer").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, Connection, Engine, Table, create_engine, func, literal_column, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import URL, make_url
from sqlalchemy.sql import Select

from cronplane.store import item_rows
from cronplane.store.dialects import pg_bulk
from cronplane.store.dialects.base import Dialect, Listener
from cronplane.store.tables.shards import FENCED_TABLES, MOVED_MARK

if TYPE_CHECKING:
    from cronplane.clock import Clock
    from cronplane.store.database import Database

# Serializes concurrent `upgrade()` calls (pg_advisory_xact_lock key).
MIGRATION_LOCK_KEY = 0x63726F6E  # "cron"

_LOCK_KEY = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_LOCK_MIGRATIONS = text("SELECT pg_advisory_xact_lock(:key)")
# The fence of moved tenants (store.tenant_moves): refuses a row of a tenant whose latest
# move here is "out".
_FENCE_FUNCTION = text(
    f"""
    CREATE OR REPLACE FUNCTION cronplane_tenant_here() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock_shared(
            hashtextextended('cronplane-tenant/' || NEW.tenant, 0));
        IF (SELECT direction FROM tenant_moves WHERE tenant = NEW.tenant
            ORDER BY epoch DESC LIMIT 1) = 'out' THEN
            RAISE EXCEPTION '{MOVED_MARK}: tenant % moved to another shard', NEW.tenant;
        END IF;
        RETURN NEW;
    END $$"""
)
_FENCE_EXISTS = text(
    "SELECT 1 FROM pg_trigger WHERE tgname = 'tenant_here' AND tgrelid = CAST(:table AS regclass)"
)
_NOTIFY = text("SELECT pg_notify(:channel, '')")
# For this transaction (`true`): no parallel workers, no JIT compiling.
_SERIAL = text(
    "SELECT set_config('max_parallel_workers_per_gather', '0', true), "
    "set_config('jit', 'off', true)"
)
_BOUND_IDLE = text("SELECT set_config('idle_in_transaction_session_timeout', :idle, true)")
_BOUND_IDLE_AND_TAG = text(
    "SELECT set_config('idle_in_transaction_session_timeout', :idle, true), "
    "set_config('application_name', :tag, true)"
)
_END_SESSIONS = text(
    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, :wait)) "
    "FROM pg_stat_activity "
    "WHERE datname = current_database() AND application_name = :tag "
    "AND pid <> pg_backend_pid()"
)

# cronplane's own URL option (libpq does not know it, so it is removed before
# connecting): the URL goes through a transaction-pooling PgBouncer.
POOLER_OPTION = "pgbouncer"
_YES = ("1", "true", "yes", "on")


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
    row_encoder = pg_bulk.RowText()  # COPY text
    params = pg_bulk.PG_VALUES

    def pooled(self, url: URL) -> bool:
        values = url.query.get(POOLER_OPTION, ())
        chosen = values if isinstance(values, str) else (values[-1] if values else "")
        return chosen.strip().lower() in _YES

    def create_engine(self, url: str, *, pool_size: int, **options: Any) -> Engine:
        parsed = make_url(url)
        if self.pooled(parsed):
            # A statement psycopg prepared lives in one server session; the
            # next transaction may run in another (PgBouncer < 1.21 does not
            # track them, Debian 12 ships 1.18). Off: plain extended protocol.
            connect_args = {**options.pop("connect_args", {}), "prepare_threshold": None}
            options["connect_args"] = connect_args
        return create_engine(
            parsed.difference_update_query([POOLER_OPTION]),
            pool_pre_ping=True,
            pool_size=pool_size,
            max_overflow=pool_size,
            **options,
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

    def fence_moved_tenants(self, conn: Connection) -> None:
        # Made by the first tenant that leaves (a row trigger costs every insert here
        # about a fifth: docs/performance.md). The trigger takes the tenant's advisory
        # lock shared, `leave` exclusively: a write and a move of one tenant are
        # serialized. CREATE TRIGGER itself waits for the inserts in flight.
        conn.execute(_FENCE_FUNCTION)
        for table in FENCED_TABLES:
            made = conn.execute(_FENCE_EXISTS, {"table": table}).first()
            if made is None:
                conn.execute(
                    text(
                        f"CREATE TRIGGER tenant_here BEFORE INSERT ON {table} "
                        "FOR EACH ROW EXECUTE FUNCTION cronplane_tenant_here()"
                    )
                )

    def notify(self, conn: Connection, channel: str) -> None:
        # Delivered at commit; nothing if the transaction rolls back.
        conn.execute(_NOTIFY, {"channel": channel})

    def serial(self, conn: Connection) -> None:
        conn.execute(_SERIAL)

    def bound_session(self, conn: Connection, idle_ms: int, tag: str | None) -> None:
        # Transaction-scoped (`true`): nothing outlives it, behind a pooler too.
        if tag is None:
            conn.execute(_BOUND_IDLE, {"idle": str(idle_ms)})
        else:
            conn.execute(_BOUND_IDLE_AND_TAG, {"idle": str(idle_ms), "tag": tag})

    def end_sessions(self, conn: Connection, tag: str, wait_ms: int) -> int:
        return int(conn.execute(_END_SESSIONS, {"tag": tag, "wait": wait_ms}).scalar_one())

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

    def listener(
        self, database: Database, clock: Clock, on_notify: Callable[[], None]
    ) -> Listener | None:
        from cronplane.store.dialects.listener import ChangeListener, listen_url

        url = listen_url(database)
        if url is None:  # through a pooler, nothing configured: the dispatcher polls
            return None
        listener = ChangeListener(database, clock, on_notify=on_notify, url=url)
        listener.start()
        return listener

    decode_items = staticmethod(item_rows.from_postgresql)
    insert_rows = staticmethod(pg_bulk.pg_copy)
    update_in = staticmethod(pg_bulk.pg_update_in)
    update_rows = staticmethod(pg_bulk.pg_update_rows)
