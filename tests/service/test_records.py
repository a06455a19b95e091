"""Records travel as documents and come back equal; the edit policy decides alone."""

from __future__ import annotations

import json
from dataclasses import replace
from uuid import uuid4

import pytest

from cronplane.clock import FakeClock
from cronplane.core.codec import from_document, to_document
from cronplane.core.edits import editable, operator_edit
from cronplane.core.inputs import Declared, ScheduleSpec
from cronplane.core.model import ApiToken, Job, Page, QueueItem, Schedule, Scope, new_schedule
from cronplane.errors import AppOwned
from cronplane.service import ScheduleService
from service_support import START

SCOPE = Scope("acme", "billing", "prod")


def _through_json(record: object) -> object:
    return from_document(type(record), json.loads(json.dumps(to_document(record))))


def test_every_record_comes_back_equal(service: ScheduleService, clock: FakeClock) -> None:
    schedule = service.create_schedule(
        Scope("acme", "billing"), ScheduleSpec(job="report", cron="*/5 * * * *"), actor="t"
    )
    item = service.run_now(schedule.scope, schedule.name, actor="t")
    token = service.tokens.create(tenant="acme", role="viewer", actor="t").token
    records: list[object] = [
        schedule,
        replace(schedule, misfire_grace=30, declared={"job": "report"}, overrides=("cron",)),
        service.get_job("acme", "billing", "report"),
        item,
        token,
        service.schedule_history(schedule.scope, schedule.name)[0],
        Page((schedule, schedule), "next"),
        Declared("report", "0 * * * *", "UTC", {"a": 1}),
    ]
    for record in records:
        assert _through_json(record) == record
    # A schedule's document adds its derived, read-only state; decoding ignores it.
    assert schedule.to_dict() == {**to_document(schedule), "state": "active", "runs_left": None}
    assert from_document(type(schedule), schedule.to_dict()) == schedule
    assert isinstance(item, QueueItem) and isinstance(token, ApiToken)
    assert isinstance(records[2], Job) and isinstance(records[0], Schedule)


def test_operator_edit_on_app_rows() -> None:
    definition = Declared("report", "0 * * * *", "UTC", {})
    row = new_schedule(
        SCOPE, "nightly", definition, schedule_id=uuid4(), source="app", now=START, next_run=None
    )
    assert "job" not in editable("app") and "job" in editable("user")
    with pytest.raises(AppOwned):
        operator_edit(row, {"job": "other"})
    assert operator_edit(row, {"cron": "0 * * * *"}) == {}
    assert operator_edit(row, {"misfire_grace": 60, "enabled": False}) == {
        "misfire_grace": 60,
        "enabled": False,
        "overrides": ["misfire_grace"],
    }
    assert operator_edit(replace(row, source="user"), {"job": "other"}) == {"job": "other"}
