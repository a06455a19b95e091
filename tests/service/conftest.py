"""Fixtures for the service tests: a FakeClock and a service over each database."""

from __future__ import annotations

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import START


@pytest.fixture
def clock() -> FakeClock:
    """Monday 2026-01-05 12:00:30 UTC, moved only by the test."""
    return FakeClock(START)


@pytest.fixture
def service(database: Database, clock: FakeClock) -> ScheduleService:
    """The service over the parametrized database, with jobs `report` and `typed`."""
    svc = ScheduleService(database, clock)
    svc.register_job(
        "acme",
        "billing",
        JobSpec(name="report", target="python:billing.jobs:report", payload={"kind": "daily"}),
        actor="test",
    )
    svc.register_job(
        "acme",
        "billing",
        JobSpec(
            name="typed",
            target="webhook:https://example.com/hook",
            payload={"batch": 1},
            payload_schema={
                "type": "object",
                "properties": {"batch": {"type": "integer"}},
                "required": ["batch"],
            },
        ),
        actor="test",
    )
    return svc
