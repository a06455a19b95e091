"""Killing a dispatcher at each step of the fire transaction loses and duplicates nothing.

A subprocess runs one tick with CRONPLANE_CRASH_AT naming a step; it dies
there by SIGKILL. A second dispatcher then takes over (after the lease
expires) and the queue must hold exactly one item for the occurrence, with
its ledger event.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database
from cronplane.store.dispatch import CRASH_ENV, CRASH_POINTS
from firing_support import add_job, add_schedule, items, ledger, occurrences

SCRIPT = Path(__file__).with_name("dispatcher_process.py")
DAY = 86_400
TTL = 2.0


def run_once(database: Database, holder: str, crash_at: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, CRASH_ENV: crash_at}
    return subprocess.run(
        [sys.executable, str(SCRIPT), database.url, holder, str(TTL), "once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_at_each_step(database: Database, point: str) -> None:
    real_now = database.now()
    midnight = real_now.replace(hour=0, minute=0, second=0, microsecond=0)
    if real_now - midnight > timedelta(seconds=DAY - 60):
        pytest.skip("too close to midnight UTC for a one-occurrence-per-day schedule")
    add_job(database)
    sid = add_schedule(database, "daily", cron=f"@every {DAY}s", next_run=midnight)

    crashed = run_once(database, "victim", point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout + crashed.stderr
    committed = point == "after_commit"
    assert len(items(database)) == (1 if committed else 0)

    # The survivor takes over once the victim's lease has expired.
    clock = FakeClock(max(database.now(), real_now) + timedelta(seconds=TTL + 1))
    survivor = Dispatcher(database, clock, holder="survivor", ttl=TTL, occurrences=occurrences)
    report = survivor.tick()
    assert report.leader and report.error is None
    assert report.fired == (0 if committed else 1)

    (item,) = items(database)
    assert item.schedule_id == sid and item.scheduled_for == midnight
    fired = [e for e in ledger(database, sid) if e.code == ev.SCHEDULE_FIRED.text]
    assert [e.item_id for e in fired] == [item.id]
    assert fired[0].detail["term"] == (1 if committed else 2)
    # And nothing more until the next occurrence.
    assert survivor.tick().fired == 0


def test_crash_points_are_inert_without_the_variable(database: Database) -> None:
    add_job(database)
    add_schedule(
        database,
        "daily",
        cron=f"@every {DAY}s",
        next_run=database.now().replace(hour=0, minute=0, second=0, microsecond=0),
    )
    done = run_once(database, "calm", "")
    assert done.returncode == 0 and "fired=1" in done.stdout, done.stderr
