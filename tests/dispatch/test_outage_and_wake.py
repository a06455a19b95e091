"""Database outages (log, back off, resume, lose nothing) and waking the leader early."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.backoff import OUTAGE_CAP
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import START, add_job, add_schedule, items, ledger, occurrences


class FlakyDatabase:
    """A Database whose connections fail while `down` is set (as when the server is gone)."""

    def __init__(self, real: Database) -> None:
        self.real = real
        self.dialect = real.dialect
        self.backend = real.backend
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise OperationalError("SELECT 1", {}, ConnectionRefusedError("database is down"))

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        self._check()
        with self.real.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        self._check()
        with self.real.read() as conn:
            yield conn


def test_outage_backs_off_then_coalesces(database: Database) -> None:
    clock = FakeClock(START)
    add_job(database)
    sid = add_schedule(database, overlap="allow")
    flaky = FlakyDatabase(database)
    dispatcher = Dispatcher(flaky, clock, holder="a", occurrences=occurrences)  # type: ignore[arg-type]
    assert dispatcher.tick().fired == 1
    flaky.down = True
    sleeps = []
    for _ in range(10):
        clock.advance(minutes=1)
        report = dispatcher.tick()
        assert report.error is not None and report.fired == 0
        sleeps.append(report.sleep)
    # Capped exponential backoff.
    assert sleeps[:3] == [0.5, 1.0, 2.0] and sleeps[-1] == OUTAGE_CAP
    assert sleeps == sorted(sleeps)
    flaky.down = False
    clock.advance(seconds=5)
    report = dispatcher.tick()
    assert report.error is None and report.fired == 1
    fired = [e for e in ledger(database, sid) if e.code == ev.SCHEDULE_FIRED.text]
    # Ten missed minutes, one fire: nothing lost, nothing stacked.
    assert fired[-1].detail["coalesced"] == 10
    assert fired[-1].scheduled_for == START + timedelta(minutes=10)
    assert len(items(database)) == 2


@pytest.mark.postgres
def test_unreachable_server_is_an_error_report_not_a_crash(pg_database: Database) -> None:
    gone = Database(
        "postgresql+psycopg://postgres@127.0.0.1:1/none", connect_args={"connect_timeout": 1}
    )
    report = Dispatcher(gone, FakeClock(START), holder="a", occurrences=occurrences).tick()
    assert report.error and report.sleep == 0.5 and not report.leader


def test_in_process_change_wakes_the_dispatcher(database: Database) -> None:
    clock = FakeClock(START)
    dispatcher = Dispatcher(database, clock, holder="a", occurrences=occurrences)
    service = ScheduleService(database, clock, on_change=dispatcher.wake)
    service.register_job("acme", "default", JobSpec(name="job", target="python:m:f"), actor="t")
    assert not dispatcher._wake.is_set()
    service.create_schedule(Scope("acme"), ScheduleSpec(job="job", cron="* * * * *"), actor="t")
    assert dispatcher._wake.is_set()


@pytest.mark.postgres
def test_notify_wakes_a_listener(pg_database: Database, pg_session_direct_url: str) -> None:
    from cronplane.clock import SystemClock
    from cronplane.store.dialects.listener import ChangeListener

    woken = threading.Event()
    calls: list[Any] = []

    def on_notify() -> None:
        calls.append(1)
        if len(calls) > 1:  # the first call is the "look now" after LISTEN
            woken.set()

    # A direct connection: through PgBouncer's transaction pooling a LISTEN hears nothing.
    direct = pg_session_direct_url.replace("postgresql+psycopg://", "postgresql://")
    listener = ChangeListener(pg_database, SystemClock(), on_notify=on_notify, url=direct)
    listener.start()
    try:
        deadline = time.monotonic() + 10
        while not calls and time.monotonic() < deadline:
            time.sleep(0.02)
        with pg_database.begin() as conn:
            conn.execute(text("SELECT pg_notify('cronplane_schedules', '')"))
        assert woken.wait(5)
    finally:
        listener.stop()


def test_run_survives_a_crashing_tick_and_releases_the_lease(sqlite_database: Database) -> None:
    from cronplane.processes.dispatch_reports import TickReport
    from cronplane.store import lease

    clock = FakeClock(START)
    dispatcher = Dispatcher(sqlite_database, clock, holder="a", occurrences=occurrences)
    real_tick = dispatcher.tick
    calls: list[int] = []

    def tick() -> TickReport:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug")
        report = real_tick()
        dispatcher.stop()
        return report

    dispatcher.tick = tick  # type: ignore[method-assign]
    dispatcher.run(listen=False)
    assert len(calls) == 2 and dispatcher.term is None
    with sqlite_database.read() as conn:
        state = lease.read(conn, "dispatcher")
    assert state is not None and state.expires_at is not None
    assert state.expires_at <= clock.now()  # released: a follower takes over at once
