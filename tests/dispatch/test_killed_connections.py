"""The database goes away under a firing leader: its connection is terminated
by the server in the middle of a fire round, statement by statement.

Each round the server kills the connection that is about to run the k-th
statement of the tick (the lease step, the due count, a lane's fence, its
due rows, its lookups, its writes), for every k the tick has. The tick must
report the error (not raise), and the next tick must fire the rest: at the
end every occurrence is one queue item with its fired event, and none is
missing. PostgreSQL only: there the server, not the process, owns the
connection, and lanes run several fire transactions at once.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

from cronplane.clock import FakeClock
from cronplane.store.database import Database
from cronplane.store.dialects.listener import plain_url
from firing_support import (
    START,
    add_job,
    add_schedules,
    check_exactly_once,
    dispatcher,
    items,
    schedule_row,
)

SCHEDULES = 1_050  # two lanes of 500, then a round of 50: several transactions per tick


class Assassin:
    """Terminates, from the server side, the connection about to run the armed statement."""

    def __init__(self, database: Database) -> None:
        self.admin = psycopg.connect(plain_url(database), autocommit=True)
        self.lock = threading.Lock()
        self.countdown: int | None = None
        self.kills = 0

    def arm(self, statement: int) -> None:
        with self.lock:
            self.countdown = statement

    def disarm(self) -> bool:
        """Disarm; True when the armed statement was reached (and its connection killed)."""
        with self.lock:
            reached, self.countdown = self.countdown is None, None
            return reached

    def __call__(self, conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        with self.lock:
            if self.countdown is None:
                return
            self.countdown -= 1
            if self.countdown > 0:
                return
            self.countdown = None
            # Asked of the server: through PgBouncer the client's own backend pid is
            # PgBouncer's, and the statement runs on the session its transaction holds.
            pid = cursor.connection.execute("SELECT pg_backend_pid()").fetchone()[0]
            # The second argument waits until the backend has exited.
            self.admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            self.kills += 1


@pytest.mark.postgres
def test_connection_killed_at_each_statement_of_a_fire_round(pg_database: Database) -> None:
    add_job(pg_database)
    add_schedules(
        pg_database,
        [schedule_row(f"s{n:05d}", next_run=START, overlap="allow") for n in range(SCHEDULES)],
    )
    clock = FakeClock(START)
    leader = dispatcher(pg_database, clock, lanes=2, batch_size=500)
    assassin = Assassin(pg_database)
    event.listen(pg_database.engine, "before_cursor_execute", assassin)
    minutes, failed = 0, 0
    try:
        statement = 1
        while True:
            assassin.arm(statement)
            report = leader.tick()
            if not assassin.disarm():
                break  # the tick had fewer statements than k: every point was hit
            assert report.error is not None, f"statement {statement}: the kill went unseen"
            failed += 1
            # The same minute again, nothing killed: the rest of the round fires.
            for _ in range(5):
                report = leader.tick()
                if report.error is None:
                    break
            assert report.error is None and report.leader
            statement += 1
            minutes += 1
            clock.advance(minutes=1)
    finally:
        event.remove(pg_database.engine, "before_cursor_execute", assassin)
        assassin.admin.close()
        leader.close()

    assert failed >= 8, f"only {failed} statements per fire round were killed"
    counts = check_exactly_once(pg_database)
    # Retried within the same minute: nothing coalesced, nothing missing.
    assert counts["max_coalesced"] == 1
    assert counts["occurrences"] == SCHEDULES * (minutes + 1)
    assert len(items(pg_database)) == SCHEDULES * (minutes + 1)
    assert all(
        row.scheduled_for <= START + timedelta(minutes=minutes) for row in items(pg_database)
    )
