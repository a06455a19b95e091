"""Several dispatcher processes on one PostgreSQL database, the leader killed or paused.

- chaos: 3 processes; the leader is SIGKILLed every few seconds and replaced.
  Bounded by CRONPLANE_CHAOS_SECONDS (default 60; longer runs by hand).
- pause: the leader is SIGSTOPped past its lease, a follower takes over, the
  old leader resumes: it must commit nothing under its old term.
- pauses mid-burst: 1,200 schedules keep the leader in fire rounds; it is
  paused at random moments, each time a follower must lead within a few
  TTLs while it is still stopped (a third of the chaos time).

Then the exactly-once checks (`firing_support.check_exactly_once`): no
occurrence twice, none missing beyond coalescing, items and fired events one
to one.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, text

from cronplane import events as ev
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database, DatabaseClock
from cronplane.store.tables import events, leases
from firing_support import add_job, add_schedules, check_exactly_once, occurrences, schedule_row

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("dispatcher_process.py")
TTL = 1.0
CHAOS_SECONDS = float(os.environ.get("CRONPLANE_CHAOS_SECONDS", "60"))


def spawn(database: Database, holder: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), database.url, holder, str(TTL), "loop"],
        stdout=subprocess.DEVNULL,
    )


def holder_now(database: Database) -> str | None:
    with database.read() as conn:
        row = conn.execute(select(leases.c.holder, leases.c.expires_at)).first()
    if row is None or row.expires_at is None or row.expires_at <= database.now():
        return None
    return str(row.holder)


def wait_for_leader(database: Database, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = holder_now(database)
        if holder is not None:
            return holder
        time.sleep(0.05)
    raise AssertionError("no leader within the timeout")


def leaders_to_strike(
    database: Database, seconds: float, rng: random.Random, wait: tuple[float, float]
) -> Iterator[str]:
    """For `seconds`: the leader, at a random moment of its leadership (`wait` after it led)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        leader = wait_for_leader(database)
        time.sleep(rng.uniform(*wait))
        if holder_now(database) == leader:
            yield leader


def seed(database: Database, count: int = 30) -> None:
    add_job(database)
    start = database.now().replace(microsecond=0) + timedelta(seconds=1)
    rows = []
    for n in range(count):
        every = 1 + n % 3
        rows.append(
            schedule_row(
                f"s{n}",
                cron=f"@every {every}s",
                next_run=occurrences(f"@every {every}s", "UTC")(start),
                overlap="allow" if n % 2 else "skip",
            )
        )
    add_schedules(database, rows)


def stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
    for proc in procs.values():
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def catch_up(database: Database) -> None:
    """One last in-process tick: fire what is due now, so next_run is in the future."""
    final = Dispatcher(
        database, DatabaseClock(database), holder="final", ttl=TTL, occurrences=occurrences
    )
    deadline = time.monotonic() + 10
    while not final.tick().leader:
        assert time.monotonic() < deadline, "final dispatcher never led"
        time.sleep(0.1)
    # Freeze the schedules at the state that tick left (nothing else fires now).
    with database.begin() as conn:
        conn.execute(text("UPDATE schedule_state SET enabled = false"))
    final.release()


def test_leader_killed_repeatedly(pg_database: Database) -> None:
    database = pg_database
    seed(database)
    procs = {f"p{n}": spawn(database, f"p{n}") for n in range(3)}
    kills = 0
    next_name = 3
    try:
        for leader in leaders_to_strike(database, CHAOS_SECONDS, random.Random(4), (1.0, 3.5)):
            procs[leader].send_signal(signal.SIGKILL)
            procs[leader].wait()
            kills += 1
            name = f"p{next_name}"
            next_name += 1
            procs[name] = spawn(database, name)
    finally:
        stop_all(procs)
    catch_up(database)
    counts = check_exactly_once(database)
    with database.read() as conn:
        takeovers = conn.execute(
            select(events.c.id).where(events.c.code == ev.LEADER_ACQUIRED.text)
        ).all()
    assert kills >= 5 and len(takeovers) >= kills
    # A takeover happens within about one TTL, so coalescing stays small.
    assert counts["max_coalesced"] <= 12, counts
    assert counts["occurrences"] > CHAOS_SECONDS * 10


def test_paused_leader_is_fenced(pg_database: Database) -> None:
    database = pg_database
    seed(database)
    procs = {"a": spawn(database, "a")}
    try:
        assert wait_for_leader(database) == "a"
        procs["b"] = spawn(database, "b")
        time.sleep(2)
        procs["a"].send_signal(signal.SIGSTOP)
        time.sleep(3 * TTL)
        assert wait_for_leader(database) == "b"
        procs["a"].send_signal(signal.SIGCONT)
        time.sleep(3)
        assert holder_now(database) == "b"
    finally:
        stop_all(procs)
    catch_up(database)
    check_exactly_once(database)
    with database.read() as conn:
        acquired = conn.execute(
            select(events.c.id, events.c.detail)
            .where(events.c.code == ev.LEADER_ACQUIRED.text)
            .order_by(events.c.id)
        ).all()
        fires = conn.execute(
            select(events.c.id, events.c.detail).where(
                events.c.code.in_([ev.SCHEDULE_FIRED.text, ev.SKIPPED_OVERLAP.text])
            )
        ).all()
    holders = [(row.detail["holder"], row.detail["term"]) for row in acquired]
    assert holders[:2] == [("a", 1), ("b", 2)]
    b_took_over = acquired[1].id
    # Every write under a's term happened before b's takeover committed.
    assert max(row.id for row in fires if row.detail["term"] == 1) < b_took_over
    assert any(row.detail["term"] == 2 for row in fires)


def test_leader_paused_repeatedly_mid_burst(pg_database: Database) -> None:
    """Pauses that land anywhere in a fire round (between statements, inside a
    lane's COPY): each time another process leads within a few TTLs while the
    paused one is still stopped, and nothing fires twice."""
    database = pg_database
    seed(database, count=1_200)  # about 700 due a second: rounds of lanes all the time
    procs = {f"p{n}": spawn(database, f"p{n}") for n in range(3)}
    takeovers: list[float] = []
    try:
        strikes = leaders_to_strike(database, CHAOS_SECONDS / 3, random.Random(7), (0.2, 1.2))
        for leader in strikes:
            procs[leader].send_signal(signal.SIGSTOP)
            paused = time.monotonic()
            while holder_now(database) in (None, leader):
                assert time.monotonic() - paused < 8 * TTL, (
                    f"no takeover while {leader} is paused ({time.monotonic() - paused:.1f}s)"
                )
                time.sleep(0.02)
            takeovers.append(time.monotonic() - paused)
            procs[leader].send_signal(signal.SIGCONT)
    finally:
        stop_all(procs)
    catch_up(database)
    counts = check_exactly_once(database)
    assert len(takeovers) >= 5, takeovers
    assert counts["occurrences"] > CHAOS_SECONDS / 3 * 300
