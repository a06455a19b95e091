"""Run now, and queue items: list, get, cancel, wait."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.model import Scope
from cronplane.errors import (
    InvalidState,
    ItemFinished,
    JobInactive,
    QueueItemNotFound,
    ScheduleNotFound,
)
from cronplane.processes.worker import Worker
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store.database import Database
from firing_support import START, TENANT, add_job, add_schedule, ledger, schedule

SCOPE = Scope(TENANT)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def test_run_now_enqueues_manual_item(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:ok")
    sid = add_schedule(database, next_run=START + timedelta(hours=1))
    before = schedule(database, sid)
    runs = RunService(Context(database, clock))
    item = runs.run_now(SCOPE, "every-minute", actor="cli")
    assert item.source == "manual" and item.priority == 5 and item.scheduled_for is None
    assert item.expires_at == START + timedelta(hours=5)
    after = schedule(database, sid)
    assert (after.last_run, after.next_run) == (before.last_run, before.next_run)
    (event,) = ledger(database, sid)
    assert event.code == ev.SCHEDULE_RUN_NOW.text and event.item_id == item.id
    # A second run now is another item (manual runs never collide on the key).
    runs.run_now(SCOPE, "every-minute", actor="cli")
    assert len(runs.list_items(TENANT)) == 2


def test_run_now_waits_and_reports_the_failure(database: Database, clock: FakeClock) -> None:
    add_job(database, target="python:worker_handlers:boom", options={"max_attempts": 1})
    add_schedule(database)
    runs = RunService(Context(database, clock))
    item = runs.run_now(SCOPE, "every-minute", actor="cli")
    Worker(database, clock, heartbeat=False).run_once()
    done = runs.wait(TENANT, item.id, timeout=5)
    assert done.status == "failed" and "boom" in (done.error or "")


def test_wait_times_out_on_unfinished_item(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database)
    runs = RunService(Context(database, clock))
    item = runs.run_now(SCOPE, "every-minute", actor="cli")
    assert runs.wait(TENANT, item.id, timeout=1).status == "queued"


def test_run_now_errors(database: Database, clock: FakeClock) -> None:
    runs = RunService(Context(database, clock))
    with pytest.raises(ScheduleNotFound):
        runs.run_now(SCOPE, "nope", actor="cli")
    add_job(database, status="inactive")
    add_schedule(database)
    with pytest.raises(JobInactive):
        runs.run_now(SCOPE, "every-minute", actor="cli")


def test_cancel_and_tenant_isolation(database: Database, clock: FakeClock) -> None:
    add_job(database)
    add_schedule(database)
    runs = RunService(Context(database, clock))
    item = runs.run_now(SCOPE, "every-minute", actor="cli")
    with pytest.raises(QueueItemNotFound):
        runs.get_item("other-tenant", item.id)
    with pytest.raises(QueueItemNotFound):
        runs.cancel_item(TENANT, uuid.uuid4(), actor="cli:ops")
    cancelled = runs.cancel_item(TENANT, item.id, actor="cli:ops")
    assert (cancelled.status, cancelled.cancelled_by) == ("cancelled", "cli:ops")
    with pytest.raises(ItemFinished) as refused:
        runs.cancel_item(TENANT, item.id, actor="cli:ops")
    assert refused.value.code.text == "X409200ITMFIN"
    assert isinstance(refused.value, InvalidState)
    assert runs.list_items(TENANT, status="cancelled")[0].id == item.id
