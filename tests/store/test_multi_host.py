"""A multi-host PostgreSQL URL (a Patroni pair; issue 40): psycopg 3 through SQLAlchemy
2 takes `?host=a:p1&host=b:p2&target_session_attrs=read-write` (or `host=a,b&port=p1,p2`)
and connects to whichever host is the primary. The engine reads it so; the LISTEN
connection must too, or the dispatcher's wake-ups stop for good on such a URL."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from cronplane.clock import SystemClock
from cronplane.errors import UnsupportedDatabase
from cronplane.store.database import Database
from cronplane.store.dialects.conninfo import libpq_conninfo, listen_conninfo
from cronplane.store.dialects.listener import plain_url


def test_every_host_reaches_libpq() -> None:
    url = "postgresql://cron:pw@/cron?host=10.0.0.1:5432&host=10.0.0.2:5433&target_session_attrs=read-write"
    conninfo = libpq_conninfo(url, "X")
    assert "host=10.0.0.1,10.0.0.2" in conninfo and "port=5432,5433" in conninfo
    assert "target_session_attrs=read-write" in conninfo
    listed = "postgresql://cron@/cron?host=10.0.0.1,10.0.0.2&port=5432,5433"
    assert "host=10.0.0.1,10.0.0.2" in libpq_conninfo(listed, "X")
    # cronplane's own PgBouncer option never reaches libpq.
    assert "pgbouncer" not in libpq_conninfo("postgresql://h/d?pgbouncer=true", "X")


def test_mixed_host_forms_are_refused_naming_the_variable() -> None:
    with pytest.raises(UnsupportedDatabase) as refused:
        listen_conninfo({"CRONPLANE_LISTEN_URL": "postgresql://u@/d?host=a:1&host=b:2&port=3"})
    assert refused.value.detail["field"] == "CRONPLANE_LISTEN_URL"
    assert "libpq refuses it" in refused.value.message


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def multi_host(pg_session_direct_url: str) -> Iterator[Database]:
    """The session's database behind a multi-host URL whose first host answers nothing."""
    direct = make_url(pg_session_direct_url)
    hosts = f"host=127.0.0.1:{_closed_port()}&host={direct.host}:{direct.port or 5432}"
    url = f"postgresql+psycopg://{direct.username}@/{direct.database}?{hosts}"
    database = Database(url + "&target_session_attrs=read-write")
    yield database
    database.dispose()


@pytest.mark.postgres
def test_the_engine_connects_to_the_host_that_answers(multi_host: Database) -> None:
    with multi_host.read() as conn:
        assert conn.execute(text("SELECT NOT pg_is_in_recovery()")).scalar_one() is True


@pytest.mark.postgres
def test_the_listener_hears_through_a_multi_host_url(
    multi_host: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRONPLANE_LISTEN_URL", raising=False)
    assert "host=127.0.0.1,127.0.0.1" in plain_url(multi_host)
    calls: list[int] = []
    woken = threading.Event()

    def on_notify() -> None:
        calls.append(1)
        if len(calls) > 1:  # the first call is the "look now" after LISTEN
            woken.set()

    listener = multi_host.backend.listener(multi_host, SystemClock(), on_notify)
    assert listener is not None
    try:
        for _ in range(500):
            if calls:
                break
            SystemClock().wait(0.02)
        assert calls, "the listener never connected"
        with multi_host.begin() as conn:
            multi_host.backend.notify(conn, "cronplane_schedules")
        assert woken.wait(5)
    finally:
        listener.stop()
