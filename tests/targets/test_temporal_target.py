"""The `temporal:` target starts a real workflow on a Temporal dev server, run by a tiny
worker of the SDK in this test; a retry of the same occurrence cannot start it twice."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from cronplane.core import target_rules
from cronplane.errors import InvalidTarget
from cronplane.targets import PermanentFailure, RunContext
from cronplane.targets.temporal import TemporalTarget, workflow_arguments, workflow_id
from temporal_dev import TemporalDev

QUEUE = "cronplane-target-test"


@workflow.defn(name="Greet")
class Greet:
    @workflow.run
    async def run(self, who: dict[str, Any], punctuation: str) -> str:
        return f"hello {who['name']}{punctuation}"


@pytest.fixture(scope="module")
def worker(temporal_dev: TemporalDev) -> Iterator[str]:
    """A worker for Greet on QUEUE, on its own event loop in a thread."""
    loop = asyncio.new_event_loop()
    ready, stop = threading.Event(), asyncio.Event()

    async def serve() -> None:
        client = await Client.connect(temporal_dev.address)
        async with Worker(
            client,
            task_queue=QUEUE,
            workflows=[Greet],
            workflow_runner=UnsandboxedWorkflowRunner(),
        ):
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "the Temporal worker did not start"
    yield temporal_dev.address
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)
    loop.close()


def context(schedule: str, options: dict[str, Any], when: datetime | None) -> RunContext:
    return RunContext(
        tenant="acme",
        stack="shop",
        environment="production",
        job="greet",
        item_id=uuid.uuid4(),
        schedule_id=uuid.uuid4(),
        schedule=schedule,
        scheduled_for=when,
        attempt=1,
        source="schedule",
        options=options,
        timeout=60,
    )


def test_starts_the_workflow_once_per_occurrence(worker: str) -> None:
    target = TemporalTarget(worker)
    try:
        when = datetime(2027, 1, 1, 9, 30, tzinfo=UTC)
        name = f"greet-{uuid.uuid4().hex[:8]}"
        options = {"task_queue": QUEUE, "wait": True}
        payload = {"args": [{"name": "ops"}, "!"]}
        first = target.run("Greet", payload, context(name, options, when))
        ident = f"cronplane-acme-shop-production-{name}-2027-01-01T09:30:00Z"
        assert first["workflow_id"] == ident and first["already_started"] is False
        assert first["result"] == "hello ops!"
        # A retry of the same occurrence (another attempt, even another item) after the
        # workflow has closed: Temporal refuses the id, nothing runs twice.
        again = target.run("Greet", payload, context(name, options, when))
        assert again["already_started"] is True and again["run_id"] == first["run_id"]
        # Without waiting: started, and the result is the ids.
        later = datetime(2027, 1, 2, 9, 30, tzinfo=UTC)
        started = target.run("Greet", payload, context(name, {"task_queue": QUEUE}, later))
        assert started["already_started"] is False and "result" not in started
    finally:
        target.close()


def test_the_base_id_and_manual_runs() -> None:
    when = datetime(2027, 1, 1, 9, 30, 0, 500000, tzinfo=UTC)
    assert workflow_id({"workflow_id": "wf-nightly"}, context("n", {}, when)) == (
        "wf-nightly-2027-01-01T09:30:00.500000Z"
    )
    manual = context("n", {}, None)
    assert workflow_id({}, manual) == f"cronplane-acme-shop-production-n-{manual.item_id}"
    assert workflow_arguments({}) == []
    assert workflow_arguments({"batch": 1}) == [{"batch": 1}]
    with pytest.raises(ValueError):
        workflow_arguments({"args": [1], "other": 2})


def test_misconfiguration_fails_at_once_and_targets_are_validated() -> None:
    with pytest.raises(PermanentFailure, match="CRONPLANE_TEMPORAL_ADDRESS"):
        TemporalTarget(None).run("Greet", {}, context("n", {"task_queue": QUEUE}, None))
    with pytest.raises(PermanentFailure, match="task_queue"):
        TemporalTarget("127.0.0.1:1").run("Greet", {}, context("n", {}, None))
    assert target_rules.validate_target("temporal:billing.SendInvoices") == "temporal"
    with pytest.raises(InvalidTarget):
        target_rules.validate_target("temporal:has space")
