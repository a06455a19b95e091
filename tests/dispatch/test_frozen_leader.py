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

import pytest
from sqlalchemy.exc import DBAPIError

from cronplane.clock import FakeClock
from cronplane.store import lease
from cronplane.store.database import Database
from firing_support import START

pytestmark = pytest.mark.postgres

TTL = timedelta(seconds=2)


def test_a_frozen_leader_is_cut_off_and_a_follower_takes_over(pg_database: Database) -> None:
    clock = FakeClock(START)
    with pg_database.begin() as conn:
        term = lease.acquire(conn, "g", "a", known_term=None, now=clock.now(), ttl=TTL)
    assert term == 1

    took_over: list[int | None] = []

    def follower() -> None:
        with pg_database.begin() as conn:
            lease.guard(conn, TTL)
            took_over.append(
                lease.acquire(conn, "g", "b", known_term=None, now=clock.now(), ttl=TTL)
            )

    frozen = pg_database.engine.connect()
    transaction = frozen.begin()
    lease.guard(frozen, TTL)
    lease.fence(frozen, "g", "a", term, clock.now())  # holds the lease row's lock
    clock.advance(seconds=TTL.total_seconds() + 1)  # the lease expires; "a" stays frozen
    thread = threading.Thread(target=follower)
    thread.start()
    thread.join(timeout=3 * TTL.total_seconds())
    assert not thread.is_alive(), "the follower still waits behind the frozen leader's lock"
    assert took_over == [2]
    # The frozen leader's transaction was ended by the server: it commits nothing.
    with pytest.raises(DBAPIError):
        transaction.commit()
    frozen.close()
    with pg_database.read() as conn:
        state = lease.read(conn, "g")
    assert state is not None and (state.holder, state.term) == ("b", 2)
