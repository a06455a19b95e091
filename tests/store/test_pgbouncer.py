"""Through a transaction-pooling PgBouncer: how cronplane knows, and what it changes.

The URL option `?pgbouncer=true` says the database goes through one: psycopg
then prepares no statement, and the dispatcher LISTENs only on a direct
connection (CRONPLANE_LISTEN_URL), or not at all. The rest of the PostgreSQL
suite runs through PgBouncer with CRONPLANE_TEST_PGBOUNCER=1 (tests/pgbouncer_server.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from cronplane.clock import SystemClock
from cronplane.store.database import Database

OFFLINE = "postgresql+psycopg://postgres@127.0.0.1:1/nowhere"


def test_the_url_option_says_the_database_is_pooled() -> None:
    for query, pooled in [("?pgbouncer=true", True), ("?pgbouncer=1", True), ("", False)]:
        database = Database(OFFLINE + query)
        assert database.pooled is pooled
        # libpq does not know the option: it never reaches the driver.
        assert "pgbouncer" not in database.engine.url.query
        database.dispose()
    assert Database(OFFLINE + "?pgbouncer=false").pooled is False
    assert Database("sqlite://").pooled is False


def test_a_pooled_database_without_a_listen_url_has_no_listener(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CRONPLANE_LISTEN_URL", raising=False)
    database = Database(OFFLINE + "?pgbouncer=true")
    # None: the dispatcher polls (max_sleep); nothing connects to find out.
    assert database.backend.listener(database, SystemClock(), lambda: None) is None


@pytest.fixture
def pooled(pg_pooled_url: str) -> Iterator[Database]:
    database = Database(pg_pooled_url)
    yield database
    database.dispose()


@pytest.mark.postgres
def test_through_pgbouncer_psycopg_prepares_nothing(pooled: Database) -> None:
    for _ in range(10):  # psycopg would prepare from the 5th time on
        with pooled.read() as conn:
            assert conn.execute(text("SELECT count(*) FROM leases")).scalar_one() >= 0
            assert conn.connection.driver_connection.prepare_threshold is None  # type: ignore[union-attr]
        with pooled.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM pg_prepared_statements").scalar() == 0


@pytest.mark.postgres
def test_through_pgbouncer_the_listen_url_hears_a_pooled_write(
    pooled: Database, pg_session_direct_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_LISTEN_URL", pg_session_direct_url)
    calls: list[int] = []
    woken = threading.Event()

    def on_notify() -> None:
        calls.append(1)
        if len(calls) > 1:  # the first call is the "look now" after LISTEN
            woken.set()

    listener = pooled.backend.listener(pooled, SystemClock(), on_notify)
    assert listener is not None
    try:
        for _ in range(500):
            if calls:
                break
            SystemClock().wait(0.02)
        with pooled.begin() as conn:
            pooled.backend.notify(conn, "cronplane_schedules")
        assert woken.wait(5)
    finally:
        listener.stop()
