"""Through a transaction-pooling PgBouncer with no CRONPLANE_LISTEN_URL the dispatcher
hears no NOTIFY: a row another node makes due now fires at the leader's next look,
within `max_sleep` (1 s), the latency docs/operations.md ("Through PgBouncer") states.
With CRONPLANE_LISTEN_URL (a direct connection) the NOTIFY wakes it at once."""

from __future__ import annotations

import threading

import pytest

from cronplane.clock import SystemClock
from cronplane.processes.dispatcher import DEFAULT_MAX_SLEEP
from cronplane.store.database import Database, DatabaseClock
from cronplane.store.schedules import insert_rows, notify_changed
from firing_support import add_job, dispatcher, items, ledger, schedule_row


@pytest.mark.postgres
@pytest.mark.parametrize("wake", ["poll", "listen"])
def test_through_pgbouncer_a_new_due_row_fires_within_one_poll(
    wake: str,
    pg_database: Database,
    pg_pooled_url: str,
    pg_session_direct_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if wake == "listen":
        monkeypatch.setenv("CRONPLANE_LISTEN_URL", pg_session_direct_url)
    else:
        monkeypatch.delenv("CRONPLANE_LISTEN_URL", raising=False)
    pooled = Database(pg_pooled_url)
    add_job(pg_database)
    leader = dispatcher(pooled, DatabaseClock(pooled))
    if wake == "poll":
        assert pooled.backend.listener(pooled, SystemClock(), leader.wake) is None
    thread = threading.Thread(target=leader.run, daemon=True)
    thread.start()
    wait = SystemClock()
    try:
        for _ in range(250):
            if leader.term is not None:
                break
            wait.wait(0.02)
        assert leader.term is not None
        late_ms = []
        for n, pause in enumerate((0.3, 0.65, 1.0)):
            wait.wait(pause)  # the leader asleep, at a different point of its sleep each time
            # Written by "another node": this process's dispatcher is not told.
            with pg_database.begin() as conn:  # as the service does: rows, then pg_notify
                insert_rows(conn, [schedule_row(f"s{n}", next_run=pooled.now())])
                notify_changed(conn)
            for _ in range(250):
                if len(items(pg_database)) > n:
                    break
                wait.wait(0.02)
            assert len(items(pg_database)) == n + 1
            late_ms.append(ledger(pg_database)[-1].detail["late_ms"])
    finally:
        leader.stop()
        thread.join(timeout=10)
        pooled.dispose()
    print(f"through PgBouncer, woken by {wake}: fired {late_ms} ms after due")
    assert max(late_ms) <= DEFAULT_MAX_SLEEP * 1000 + 500, late_ms
