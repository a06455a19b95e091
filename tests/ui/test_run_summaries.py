"""The run facts the console reads, on SQLite and PostgreSQL: last item, ever fired, retry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidState, QueueItemNotFound
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store import queue
from cronplane.store.database import Database

START = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)
SCOPE = Scope("acme", "ops", "prod")


def _service(database: Database, clock: FakeClock) -> ScheduleService:
    service = ScheduleService(database, clock)
    service.register_job("acme", "ops", JobSpec(name="ping", target="python:m:f"), actor="t")
    for name, cron in (("fires", "*/10 * * * *"), ("waits", "0 0 1 1 *")):
        service.create_schedule(SCOPE, ScheduleSpec(job="ping", cron=cron, name=name), actor="t")
    return service


def _fail_next(database: Database, clock: FakeClock) -> None:
    with database.begin() as conn:
        item = queue.claim(conn, "w", clock.now(), timedelta(minutes=1))
        assert item is not None
        assert queue.fail(conn, item.id, "w", clock.now(), "boom", None)


def test_last_items_and_fired_schedules(database: Database) -> None:
    clock = FakeClock(START)
    service = _service(database, clock)
    fires = service.get_schedule(SCOPE, "fires")
    waits = service.get_schedule(SCOPE, "waits")
    ids = [fires.id, waits.id]
    assert service.runs.last_items("acme", ids) == {}
    assert service.runs.fired_schedules("acme", ids) == set()

    manual = service.run_now(SCOPE, "waits", actor="t")
    clock.advance(minutes=15)
    Dispatcher(database, clock).tick()
    clock.advance(seconds=1)
    later = service.run_now(SCOPE, "fires", actor="t")

    assert service.runs.fired_schedules("acme", ids) == {fires.id}  # a run-now is no fire
    last = service.runs.last_items("acme", ids)
    assert last[fires.id].id == later.id
    assert last[waits.id].id == manual.id
    assert service.runs.last_items("other-tenant", ids) == {}
    assert service.runs.fired_schedules("other-tenant", ids) == set()


def test_retry_enqueues_a_fresh_manual_copy_of_a_failed_item(database: Database) -> None:
    clock = FakeClock(START)
    service = _service(database, clock)
    item = service.run_now(SCOPE, "waits", actor="t")
    with pytest.raises(InvalidState):
        service.runs.retry_item("acme", item.id, actor="op")
    _fail_next(database, clock)
    clock.advance(seconds=5)
    retry = service.runs.retry_item("acme", item.id, actor="op")
    assert retry.id != item.id
    assert (retry.status, retry.source, retry.attempts) == ("queued", "manual", 0)
    assert (retry.job, retry.payload, retry.schedule_id) == (
        item.job,
        item.payload,
        item.schedule_id,
    )
    assert service.get_item("acme", item.id).status == "failed"  # the failed item stays
    ledger = service.schedule_history(SCOPE, "waits")
    assert ledger[0].item_id == retry.id and ledger[0].actor == "op"
    assert ledger[0].detail["retry_of"] == str(item.id)
    with pytest.raises(QueueItemNotFound):
        service.runs.retry_item("other-tenant", item.id, actor="op")


def test_recent_items_are_each_rows_newest_oldest_first(database: Database) -> None:
    clock = FakeClock(START)
    service = _service(database, clock)
    fires = service.get_schedule(SCOPE, "fires")
    waits = service.get_schedule(SCOPE, "waits")
    ids = [fires.id, waits.id]
    assert service.runs.recent_items("acme", ids, 3) == {}
    made = []
    dispatcher = Dispatcher(database, clock)
    for _ in range(5):  # fires interleaved with run-nows, one second apart
        clock.advance(minutes=10)
        dispatcher.tick()
        clock.advance(seconds=1)
        made.append(service.run_now(SCOPE, "fires", actor="t").id)
    manual = service.run_now(SCOPE, "waits", actor="t")

    recent = service.runs.recent_items("acme", ids, 3)
    assert [item.id for item in recent[fires.id]] == made[-3:]  # the newest, oldest first
    every = service.runs.recent_items("acme", ids, 20)[fires.id]
    # The first fire's item is still queued, so the later fires were skipped (overlap).
    assert [item.source for item in every] == ["schedule"] + ["manual"] * 5
    times = [item.created_at for item in every]
    assert times == sorted(times)
    assert [item.id for item in recent[waits.id]] == [manual.id]
    assert service.runs.recent_items("other-tenant", ids, 3) == {}
