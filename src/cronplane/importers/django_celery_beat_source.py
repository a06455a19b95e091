"""django-celery-beat's tables, read without Django: the importer's only I/O.

One read-only transaction over ``django_celery_beat_periodictask`` and the
crontab, interval, clocked and solar schedule tables (SQLite, PostgreSQL;
MySQL when a driver is installed), with SQLAlchemy, reflecting the columns the
installed version has. ``django_celery_beat.translate`` reads what it returns.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sqlalchemy import MetaData, Table, create_engine, inspect, select
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from cronplane.errors import InvalidRequest
from cronplane.importers.translation import cron_name

PREFIX: Final = "django_celery_beat_"
TASKS: Final = f"{PREFIX}periodictask"
SCHEDULE_TABLES: Final = {
    "crontab": f"{PREFIX}crontabschedule",
    "interval": f"{PREFIX}intervalschedule",
    "clocked": f"{PREFIX}clockedschedule",
    "solar": f"{PREFIX}solarschedule",
}


@dataclass(frozen=True, slots=True)
class BeatTask:
    """One periodic task row with its schedule's row (by kind), as read."""

    task: Mapping[str, Any]
    schedules: Mapping[str, Mapping[str, Any]]  # kind -> that schedule table's row


def engine_for(url: str) -> Engine:
    """An engine for a Django-style URL (`postgres://`, `sqlite:///`, `mysql://`) or a
    SQLite file's path; InvalidRequest when SQLAlchemy has no driver for it."""
    if "://" not in url:
        path = Path(url)
        if not path.is_file():
            raise InvalidRequest(f"{url!r} is neither a database URL nor a file", {"url": url})
        return create_engine(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true")
    scheme, rest = url.split("://", 1)
    scheme = {"postgres": "postgresql+psycopg", "postgresql": "postgresql+psycopg"}.get(
        scheme, scheme
    )
    if scheme == "mysql" and importlib.util.find_spec("pymysql") is not None:
        scheme = "mysql+pymysql"  # else SQLAlchemy's default, mysqlclient
    try:
        parsed = make_url(f"{scheme}://{rest}")
        if parsed.get_backend_name() == "sqlite" and parsed.database:
            # Opened read-only: this import never writes the source.
            return create_engine(f"sqlite:///file:{parsed.database}?mode=ro&uri=true")
        return create_engine(parsed)
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise InvalidRequest(
            f"cannot open {parsed_name(url)}: {error} (install its driver, e.g. pymysql)",
            {"url": parsed_name(url)},
        ) from error


def parsed_name(url: str) -> str:
    """The URL with any password masked, for messages."""
    try:
        return make_url(url.replace("postgres://", "postgresql://", 1)).render_as_string(
            hide_password=True
        )
    except ArgumentError:
        return "the database"


def database_name(url: str) -> str:
    """A stack name from the database's name (`…/shop` → `shop`, `beat.sqlite3` → `beat`)."""
    if "://" not in url:
        return cron_name(Path(url).stem, "default")
    try:
        name = make_url(url.replace("postgres://", "postgresql://", 1)).database or ""
    except ArgumentError:
        name = ""
    return cron_name(Path(name).stem, "default")


def read_tasks(url: str) -> list[BeatTask]:
    """Every periodic task with its schedule row, in one read-only transaction."""
    engine = engine_for(url)
    try:
        with engine.connect() as conn:
            _read_only(conn)
            tables = _reflect(conn)
            schedules = {
                kind: {row["id"]: row for row in _rows(conn, table)}
                for kind, table in tables.items()
                if kind != "task"
            }
            tasks = []
            for row in _rows(conn, tables["task"]):
                found = {
                    kind: schedules[kind][row[f"{kind}_id"]]
                    for kind in schedules
                    if row.get(f"{kind}_id") is not None and row[f"{kind}_id"] in schedules[kind]
                }
                tasks.append(BeatTask(row, found))
            conn.rollback()
            return tasks
    except SQLAlchemyError as error:
        raise InvalidRequest(
            f"cannot read django-celery-beat's tables from {parsed_name(url)}: "
            f"{type(error).__name__}: {str(error).splitlines()[0]}",
            {"url": parsed_name(url)},
        ) from error
    finally:
        engine.dispose()


def _read_only(conn: Connection) -> None:
    """Ask the server for a read-only transaction where it has one."""
    backend = conn.dialect.name
    if backend == "postgresql":
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
    elif backend in ("mysql", "mariadb"):
        conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")


def _reflect(conn: Connection) -> dict[str, Table]:
    """The tables by kind (`task`, `crontab`, …), as this database has them."""
    metadata = MetaData()
    names = [TASKS, *SCHEDULE_TABLES.values()]
    present = set(inspect(conn).get_table_names())
    if TASKS not in present:
        raise InvalidRequest(
            f"no table {TASKS}: is this django-celery-beat's database (migrated)?",
            {"table": TASKS},
        )
    metadata.reflect(conn, only=[n for n in names if n in present])
    tables = {"task": metadata.tables[TASKS]}
    tables.update(
        {kind: metadata.tables[name] for kind, name in SCHEDULE_TABLES.items() if name in present}
    )
    return tables


def _rows(conn: Connection, table: Table) -> list[dict[str, Any]]:
    query = select(table)
    if "id" in table.c:
        query = query.order_by(table.c.id)
    return [dict(row._mapping) for row in conn.execute(query)]
