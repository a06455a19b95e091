"""The database's clock is read on connections of its own (PostgreSQL).

A part of a node reads `clock.now()` inside its own transactions (a lease release, a
heartbeat, a recorded outcome). Read from the engine's pool, that waited for a second
connection of the pool the transaction holds one of: with every connection so held,
each waited the pool's timeout and a node's stop took 30 s (a CI run saw 31 s)."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import pytest

from cronplane.store.database import Database


@pytest.mark.postgres
def test_the_clock_answers_while_every_pooled_connection_is_in_a_transaction(
    pg_session_url: str,
) -> None:
    # One pooled connection plus one overflow; a wait for a third gives up after 2 s.
    database = Database(pg_session_url, pool_size=1, pool_timeout=2)
    try:
        with ExitStack() as held:
            first = held.enter_context(database.begin())
            held.enter_context(database.begin())
            started = time.monotonic()
            now = database.now()
            took = time.monotonic() - started
            server_now = first.exec_driver_sql("SELECT clock_timestamp()").scalar_one()
        assert took < 1.0, f"a clock read waited {took:.2f} s for the pool"
        assert abs((server_now - now).total_seconds()) < 1.0  # the server's clock, not ours
    finally:
        database.dispose()


@pytest.mark.postgres
def test_threads_holding_transactions_read_the_clock_without_waiting(pg_session_url: str) -> None:
    database = Database(pg_session_url, pool_size=2, pool_timeout=2)
    errors: list[BaseException] = []
    all_holding = threading.Barrier(4)

    def part() -> None:  # as a heartbeat: a transaction, the clock read inside it
        try:
            with database.begin():
                all_holding.wait(timeout=5)
                database.now()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=part) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert errors == []
    finally:
        database.dispose()
