"""The Dialect interface: what each supported database answers differently."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from sqlalchemy import CTE, Connection, Engine, Table, select
from sqlalchemy.engine import URL
from sqlalchemy.sql import Select


class Listener(Protocol):
    """A background wake-up source (LISTEN/NOTIFY): stopped with the dispatcher."""

    def stop(self) -> None:
        """Stop listening."""
        ...


class RowsInsert(Protocol):
    """INSERT rows encoded by the dialect's `row_encoder`, in `columns` order."""

    def __call__(
        self, conn: Connection, table: Table, columns: tuple[str, ...], rows: Sequence[Any], /
    ) -> None: ...


class InUpdate(Protocol):
    """UPDATE … SET set_columns = values WHERE match AND key IN keys; rows matched.

    `values`, the `match` value and `keys` are driver-ready (the dialect's `params`).
    """

    def __call__(
        self,
        conn: Connection,
        table: Table,
        set_columns: tuple[str, ...],
        values: Sequence[Any],
        /,
        *,
        match: tuple[str, Any],
        key: str,
        keys: Sequence[Any],
        extra_set: str = "",
    ) -> int: ...


class RowsUpdate(Protocol):
    """UPDATE table SET column = value (or several columns) WHERE keys = key values, for
    each row (value(s), *key values) of driver-ready values (the dialect's `params`).

    `extra_set`, `where`: constant SQL every row shares (more assignments, a condition);
    `returning`: the first key of each row updated (else nothing is returned)."""

    def __call__(
        self,
        conn: Connection,
        table: Table,
        keys: tuple[str, ...],
        column: str | tuple[str, ...],
        rows: Sequence[Any],
        /,
        *,
        extra_set: str = "",
        where: str = "",
        returning: bool = False,
    ) -> list[Any]: ...


class ItemsDecode(Protocol):
    """Queue items from rows of `store.item_rows.COLUMNS` as the driver returns them."""

    def __call__(self, rows: Iterable[Sequence[Any]], /) -> list[QueueItem]: ...


if TYPE_CHECKING:
    from cronplane.clock import Clock
    from cronplane.core.model import QueueItem
    from cronplane.store.bulk import Encoder
    from cronplane.store.database import Database
    from cronplane.store.dialects.pg_bulk import RowText


class Dialect:
    """One database's answers; a stateless singleton per database (see the package docstring)."""

    name: ClassVar[str]  # SQLAlchemy's backend name
    driver: ClassVar[str]  # the one driver cronplane runs it with
    # Several fire transactions at once pay off (a server with its own processes).
    parallel_fires: ClassVar[bool]
    # Server sessions exist to bound (idle in transaction) and to end (a dead leader's).
    server_sessions: ClassVar[bool]
    # Alembic's batch mode (ALTER by table copy).
    batch_migrations: ClassVar[bool]
    # A database behind the code is migrated at start (one embedded file), not by hand.
    migrates_when_behind: ClassVar[bool]
    # Timestamps are stored without zone (as UTC) and read back naive.
    zoneless_datetimes: ClassVar[bool]
    # Fire transactions defer a checkpoint to the end of a burst (`after_burst`).
    defers_checkpoint: ClassVar[bool]
    # A fire writes its rows unfiled; the dispatcher files them after (store.filing).
    files_later: ClassVar[bool]
    # A boolean column as a condition in raw SQL (SQLite's partial indexes name `= 1`).
    true_sql: ClassVar[str]  # a format string with `{column}`
    # Bulk values: rows for `insert_rows` and parameters for `update_in`.
    row_encoder: Encoder | RowText
    params: Encoder
    # Queue items from rows of the driver's own values (store.item_rows: a claim's rows).
    decode_items: ClassVar[ItemsDecode]

    def database_file(self, url: URL) -> str | None:
        """The file a URL names, when the database is one (None: a server's)."""
        return None

    def pooled(self, url: URL) -> bool:
        """Whether `url` goes through a transaction pooler (PgBouncer): no session state."""
        return False

    def create_engine(self, url: str, *, pool_size: int, **options: Any) -> Engine:
        """The engine for `url`, with this database's connection settings."""
        raise NotImplementedError

    def begin_write(self, conn: Connection) -> None:
        """Prepare `conn` for a write transaction (called before it begins)."""

    def skip_locked(self, query: Select[Any]) -> Select[Any]:
        """`query` locking its rows and skipping those another transaction holds."""
        return query

    def among(self, column: Any, chosen: CTE) -> Any:
        """`column` is one of the ids `chosen` (a one-column CTE) selected, in a WHERE."""
        return column.in_(select(chosen.c[0]))

    def insert(self, table: Table) -> Any:
        """An INSERT that supports ON CONFLICT DO NOTHING."""
        raise NotImplementedError

    def lock_scope(self, conn: Connection, key: str) -> None:
        """Serialize transactions that name `key` until commit."""

    def lock_migrations(self, conn: Connection) -> None:
        """Serialize concurrent migrations until commit."""

    def fence_moved_tenants(self, conn: Connection) -> None:
        """Make sure the fence of tenants that left this shard is in place (migration 0026;
        store.tenant_moves): a new row of such a tenant in FENCED_TABLES is refused."""

    def notify(self, conn: Connection, channel: str) -> None:
        """Wake listeners of `channel` at commit."""

    def serial(self, conn: Connection) -> None:
        """Plan this transaction's queries without parallel workers or JIT compiling (a
        page of a few index entries: starting workers, or compiling, costs more than it
        saves; a merge of ranges is costed by the ranges' sizes, not by its page's)."""

    def clock(self, database: Database) -> Clock:
        """The clock every part of a node reads on this database."""
        raise NotImplementedError

    def now(self, engine: Engine) -> datetime:
        """The database's now (the process's where the database has no shared clock)."""
        raise NotImplementedError

    def analyze(self, engine: Engine, tables: Sequence[str]) -> None:
        """Refresh the planner statistics of `tables`."""

    def listener(
        self, database: Database, clock: Clock, on_notify: Callable[[], None]
    ) -> Listener | None:
        """A started thread calling `on_notify` when another node changes schedules, if any."""
        return None

    def bound_session(self, conn: Connection, idle_ms: int, tag: str | None) -> None:
        """Let the server end this transaction's session after `idle_ms` idle, and name the
        session `tag` for `end_sessions` (both until the transaction ends)."""

    def end_sessions(self, conn: Connection, tag: str, wait_ms: int) -> int:
        """End the other server sessions named `tag`, waiting up to `wait_ms`; how many."""
        return 0

    def after_burst(self, conn: Connection) -> None:
        """Once a burst of fire transactions is committed (see `defers_checkpoint`)."""

    # The batched writes, bound per database to store.bulk's functions.
    insert_rows: ClassVar[RowsInsert]
    update_in: ClassVar[InUpdate]
    update_rows: ClassVar[RowsUpdate]
