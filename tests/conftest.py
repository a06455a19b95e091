"""Session-wide fixtures: where PostgreSQL is, and the rule that CI never skips it."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import pgbouncer_server
from allowed_modules import VALUE as ALLOWED_PYTHON_TARGETS
from cronplane.store.database import Database
from required_services import require_service
from table_support import empty_tables

# Shards (a control database and three more) for the sharding tests.
pytest_plugins = ["shard_support"]

# The suite's receivers listen on loopback, which the outbound rule denies by default
# (core.outbound); the tests of that denial give their own policy or variable.
LOOPBACK_ALLOWED = "127.0.0.1,::1"
os.environ["CRONPLANE_OUTBOUND_ALLOW"] = LOOPBACK_ALLOWED
# The tests' own job modules (tests/allowed_modules.py), for this process and the worker and
# server processes tests start; a test that judges the rule sets its own value.
os.environ["CRONPLANE_PYTHON_TARGETS"] = ALLOWED_PYTHON_TARGETS

PG_ADMIN_URL = os.environ.get(
    "CRONPLANE_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """The admin URL of the local PostgreSQL server (checked reachable)."""
    import psycopg

    plain = PG_ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(plain, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        require_service("PostgreSQL", error)
    return PG_ADMIN_URL


@pytest.fixture(scope="session")
def pgbouncer(pg_admin_url: str) -> Iterator[pgbouncer_server.PgBouncer | None]:
    """The session's PgBouncer (transaction pooling) with CRONPLANE_TEST_PGBOUNCER=1, else None."""
    if not pgbouncer_server.wanted():
        yield None
        return
    bouncer = pgbouncer_server.start(pg_admin_url)
    yield bouncer
    bouncer.stop()


@pytest.fixture(scope="session")
def pg_through(pgbouncer: pgbouncer_server.PgBouncer | None) -> Callable[[str], str]:
    """How the tests reach a database of the server: directly, or through the session's
    PgBouncer (CRONPLANE_TEST_PGBOUNCER=1). Creating and dropping databases stays direct."""
    return (lambda url: url) if pgbouncer is None else pgbouncer.through


# -- databases -----------------------------------------------------------------
#
# `database` is parametrized over SQLite (a fresh file per test) and PostgreSQL
# (one fresh database per test session, emptied between tests). Both are
# migrated through Alembic, so every test also exercises the migrations.


_session_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_session_direct_url(pg_admin_url: str) -> Iterator[str]:
    """The direct URL of an empty PostgreSQL database made for this session, dropped after it."""
    import psycopg

    name = f"cronplane_test_{os.getpid()}_{next(_session_counter)}"
    plain = pg_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield pg_admin_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_session_url(pg_session_direct_url: str, pg_through: Callable[[str], str]) -> str:
    """The session's PostgreSQL database, migrated, as the tests reach it (maybe PgBouncer)."""
    url = pg_through(pg_session_direct_url)
    database = Database(url)
    database.upgrade()
    database.dispose()
    return url


@pytest.fixture(scope="session")
def pg_pooled_url(
    pgbouncer: pgbouncer_server.PgBouncer | None, pg_admin_url: str, pg_session_url: str
) -> Iterator[str]:
    """The session's database through a PgBouncer (transaction pooling) in any session: the
    session's own, or one started for the tests of the pooled mode itself."""
    if pgbouncer is not None:
        yield pg_session_url
        return
    started = pgbouncer_server.start(pg_admin_url)
    yield started.through(pg_session_url)
    started.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A database with no schema at all, for migration tests (a fresh PostgreSQL
    database, dropped after)."""
    if request.param == "sqlite":
        database = Database(f"sqlite:///{tmp_path / 'empty.db'}")
        yield database
        database.dispose()
        return
    import psycopg

    admin: str = request.getfixturevalue("pg_admin_url")
    plain = admin.replace("postgresql+psycopg://", "postgresql://")
    name = f"cronplane_empty_{os.getpid()}"
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    through: Callable[[str], str] = request.getfixturevalue("pg_through")
    database = Database(through(admin.rsplit("/", 1)[0] + "/" + name))
    yield database
    database.dispose()
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_database(tmp_path: Path) -> Iterator[Database]:
    """A migrated SQLite file of this test's own."""
    database = Database(f"sqlite:///{tmp_path / 'cronplane.db'}")
    database.upgrade()
    yield database
    database.dispose()


@pytest.fixture
def pg_database(pg_session_url: str) -> Iterator[Database]:
    """The session's PostgreSQL database, emptied for this test."""
    database = Database(pg_session_url)
    empty_tables(database)
    yield database
    database.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> Database:
    """Each test that takes `database` runs on SQLite and on PostgreSQL."""
    name = "sqlite_database" if request.param == "sqlite" else "pg_database"
    db: Database = request.getfixturevalue(name)
    return db
