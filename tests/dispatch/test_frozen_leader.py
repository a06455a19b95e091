"""A leader frozen inside a fire transaction cannot block takeover forever (PostgreSQL).

The fence holds the lease row's lock until the fire transaction ends. A leader
frozen mid-transaction (SIGSTOP, a stuck VM) would hold it for ever, and a
follower's takeover would wait behind it for ever. Every lease-holding
transaction bounds its idle time on the server, so the server ends a frozen
leader's session and the follower takes over.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg import pq
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError

from cronplane.clock import FakeClock
from cronplane.store import lease
from cronplane.store.database import Database
from firing_support import START, add_job, add_schedule, dispatcher

pytestmark = pytest.mark.postgres

TTL = timedelta(seconds=2)


def lead(database: Database, clock: FakeClock, holder: str = "a") -> int:
    """Take the lease of group g for `holder`; its term."""
    with database.begin() as conn:
        term = lease.acquire(conn, "g", holder, known_term=None, now=clock.now(), ttl=TTL)
    assert term is not None
    return term


def take_over(database: Database, clock: FakeClock) -> tuple[bool, list[int | None]]:
    """A follower `b` tries to take the lease; (whether it finished in time, its term)."""
    took_over: list[int | None] = []

    def follower() -> None:
        with database.begin() as conn:
            lease.guard(conn, TTL)
            took_over.append(
                lease.acquire(conn, "g", "b", known_term=None, now=clock.now(), ttl=TTL)
            )

    thread = threading.Thread(target=follower, daemon=True)
    thread.start()
    thread.join(timeout=3 * TTL.total_seconds())
    return not thread.is_alive(), took_over


def test_a_frozen_leader_is_cut_off_and_a_follower_takes_over(pg_database: Database) -> None:
    clock = FakeClock(START)
    term = lead(pg_database, clock)
    assert term == 1
    frozen = pg_database.engine.connect()
    transaction = frozen.begin()
    lease.guard(frozen, TTL)
    lease.fence(frozen, "g", "a", term, clock.now())  # holds the lease row's lock
    clock.advance(seconds=TTL.total_seconds() + 1)  # the lease expires; "a" stays frozen
    finished, took_over = take_over(pg_database, clock)
    assert finished, "the follower still waits behind the frozen leader's lock"
    assert took_over == [2]
    # The frozen leader's transaction was ended by the server: it commits nothing.
    with pytest.raises(DBAPIError):
        transaction.commit()
    frozen.close()
    with pg_database.read() as conn:
        state = lease.read(conn, "g")
    assert state is not None and (state.holder, state.term) == ("b", 2)


def test_a_leader_frozen_in_the_middle_of_a_copy_is_cut_off(pg_database: Database) -> None:
    """Frozen while the server waits for COPY data: the session is *active*, not
    idle, so no server timeout ends it; the takeover itself must cut it off."""
    clock = FakeClock(START)
    term = lead(pg_database, clock)
    frozen = pg_database.engine.connect()
    frozen.begin()
    lease.guard(frozen, TTL, firing="g")
    lease.fence(frozen, "g", "a", term, clock.now())
    # A fire batch's COPY, begun and left without its end: what a leader
    # stopped (SIGSTOP) between sending COPY data and its end leaves behind.
    pgconn = frozen.connection.dbapi_connection.pgconn  # type: ignore[union-attr]
    pgconn.send_query(b"COPY queue_items (id) FROM STDIN")
    assert pgconn.get_result().status == pq.ExecStatus.COPY_IN
    pgconn.put_copy_data(b"019cadfd-8900-7186-85de-af9466626ded")
    pgconn.flush()
    clock.advance(seconds=TTL.total_seconds() + 1)
    finished, took_over = take_over(pg_database, clock)
    assert finished, "the follower still waits behind a leader frozen mid-COPY"
    assert took_over == [2]
    frozen.invalidate()  # its transaction is gone on the server; nothing of it committed
    with pg_database.read() as conn:
        state = lease.read(conn, "g")
    assert state is not None and (state.holder, state.term) == ("b", 2)


def test_a_follower_never_cuts_off_a_live_leader(pg_database: Database) -> None:
    clock = FakeClock(START)
    term = lead(pg_database, clock)
    with pg_database.engine.connect() as leader:
        transaction = leader.begin()
        lease.guard(leader, TTL, firing="g")
        lease.fence(leader, "g", "a", term, clock.now())
        with pg_database.begin() as conn:  # the lease is current: no takeover, no cut-off
            lease.guard(conn, TTL)
            assert lease.acquire(conn, "g", "b", known_term=None, now=clock.now(), ttl=TTL) is None
        transaction.commit()  # the leader's session was left alone


def test_fire_transactions_are_tagged_for_the_cut_off(pg_database: Database) -> None:
    add_job(pg_database)
    add_schedule(pg_database)
    tags: list[str] = []

    def note_tag(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if "FOR SHARE" in statement:  # the fence: inside a fire transaction
            row = cursor.connection.execute("SELECT current_setting('application_name')")
            tags.append(row.fetchone()[0])

    event.listen(pg_database.engine, "before_cursor_execute", note_tag)
    try:
        report = dispatcher(pg_database, FakeClock(START), group="g").tick()
    finally:
        event.remove(pg_database.engine, "before_cursor_execute", note_tag)
    assert report.fired == 1
    assert tags == [lease.fire_tag("g")]
    with pg_database.read() as conn:  # the tag ends with the transaction
        assert conn.exec_driver_sql("SHOW application_name").scalar_one() != tags[0]


def test_the_cut_off_spares_the_same_group_in_another_database(
    pg_database: Database, pg_admin_url: str
) -> None:
    """pg_stat_activity spans the cluster: another deployment's dispatcher group
    of the same name, in another database, is not ours to end."""
    plain = pg_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as other:
        other.execute("SELECT set_config('application_name', %s, false)", [lease.fire_tag("g")])
        with pg_database.begin() as conn:
            assert lease.cut_off(conn, "g", timedelta(seconds=1)) == 0
        assert other.execute("SELECT 1").fetchone() == (1,)
