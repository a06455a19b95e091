"""Housekeeping runs as `system` schedules through the dispatcher and the worker."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import housekeeping
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.tables import SCHEDULE_COLUMNS, SCHEDULE_ROWS, events, queue_items, schedules
from firing_support import START, enqueue_items, item_row


def test_system_schedules_are_registered_once(database: Database) -> None:
    clock = FakeClock(START)
    housekeeping.ensure_system_schedules(database, clock)
    housekeeping.ensure_system_schedules(database, clock)
    with database.read() as conn:
        rows = conn.execute(
            select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS).order_by(schedules.c.name)
        ).all()
    assert [(r.name, r.source, r.tenant) for r in rows] == [
        ("expire-items", "system", "_system"),
        ("prune-history", "system", "_system"),
    ]
    assert rows[0].next_run == START + timedelta(minutes=1)
    housekeeping.ensure_system_schedules(database, clock, retention_days=7)
    with database.read() as conn:
        payload = conn.execute(
            select(schedules.c.payload).where(schedules.c.name == "prune-history")
        ).scalar_one()
    assert payload == {"retention_days": 7}


def test_expiry_sweep_runs_from_its_schedule(database: Database) -> None:
    clock = FakeClock(START)
    housekeeping.ensure_system_schedules(database, clock)
    enqueue_items(database, [item_row("stale", now=START - timedelta(hours=6))])
    clock.advance(61)
    assert Dispatcher(database, clock, holder="d").tick().fired == 1
    worker = Worker(database, clock, heartbeat=False)
    assert worker.run_once()
    with database.read() as conn:
        statuses = dict(conn.execute(select(queue_items.c.job, queue_items.c.status)).all())
    assert statuses == {"stale": "expired", "expire-items": "succeeded"}


def test_prune_deletes_only_past_retention(database: Database) -> None:
    clock = FakeClock(START)
    with database.begin() as conn:
        for job, finished_days_ago in (("old", 40), ("recent", 1)):
            values = queue.item_values(
                tenant="acme",
                stack="default",
                environment="default",
                job=job,
                payload={},
                source="api",
                now=START - timedelta(days=finished_days_ago),
            )
            values |= {"status": "succeeded", "finished_at": values["created_at"]}
            queue.enqueue(conn, values)
    housekeeping.ensure_system_schedules(database, FakeClock(START - timedelta(days=40)))
    assert housekeeping.prune(database, clock, 30)["items"] == 1
    with database.read() as conn:
        assert conn.execute(select(func.count()).select_from(queue_items)).scalar() == 1
        assert conn.execute(select(func.count()).select_from(events)).scalar() == 0
