"""Runs with their output (issue 39): what a command and a webhook target observed is
what the item's attempts keep, through the real worker and the service's read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webhook_receiver import Answer, Receiver, running_receiver

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.service.base import Context
from cronplane.service.runs import RunService
from cronplane.store.database import Database
from cronplane.targets import Targets
from cronplane.targets.command import CommandTarget
from cronplane.targets.webhook import EXCERPT_LIMIT, SecretKeyring, WebhookTarget
from firing_support import START, TENANT, add_job, add_schedule, items, occurrences

KEYRING = SecretKeyring(b"test-deployment-key-0123456789")


def fire(database: Database, clock: FakeClock, **schedule: Any) -> None:
    add_schedule(database, **schedule)
    Dispatcher(database, clock, holder="d", occurrences=occurrences).tick()


def work(database: Database, clock: FakeClock, targets: Targets) -> None:
    worker = Worker(
        database, clock, name="w1", targets=targets, heartbeat=False, jitter=lambda: 0.0
    )
    try:
        while worker.run_once():
            clock.advance(3600)  # past any retry's backoff
    finally:
        worker.close()


def add_command_job(database: Database, line: str, **options: Any) -> None:
    service = ScheduleService(database, FakeClock(START), allow_commands=True)
    spec = JobSpec(name="job", target=f"command:{line}", options=options)
    service.register_job(TENANT, "default", spec, actor="test")


def test_a_failed_commands_streams_are_kept_with_each_attempt(
    database: Database, tmp_path: Path
) -> None:
    clock = FakeClock(START)
    marker = tmp_path / "ran"
    line = f'echo "run $CRONPLANE_ATTEMPT" >> {marker}; echo out-$CRONPLANE_ATTEMPT; echo err-$CRONPLANE_ATTEMPT >&2; exit 3'
    add_command_job(database, line, max_attempts=2)
    fire(database, clock)
    work(database, clock, Targets({"command": CommandTarget(True)}))
    (row,) = items(database)
    assert row.status == "failed" and row.attempts == 2
    # What the command itself did: ran twice.
    assert marker.read_text() == "run 1\nrun 2\n"
    log = RunService(Context(database, clock)).item_logs(TENANT, row.id)
    assert [(a.attempt, a.outcome) for a in log.attempts] == [(1, "retry"), (2, "failed")]
    for number, attempt in enumerate(log.attempts, start=1):
        assert attempt.output == {
            "exit_code": 3,
            "stdout": f"out-{number}\n",
            "stderr": f"err-{number}\n",
        }
        assert attempt.error is not None and "command exited with 3" in attempt.error
        assert attempt.started_at is not None and attempt.finished_at >= attempt.started_at
        assert attempt.worker == "w1"
    codes = [event.code for event in log.events]
    assert codes[-2:] == ["V200032ITMRTY", "X200031ITMFAI"]
    assert all(event.item_id == row.id for event in log.events)


def test_the_command_output_cap_holds(database: Database) -> None:
    clock = FakeClock(START)
    # 3000 lines of 100 characters: 300,000 bytes on stdout, beyond the cap.
    add_command_job(database, "for i in $(seq 1 3000); do printf '%099d\\n' $i; done")
    fire(database, clock)
    work(database, clock, Targets({"command": CommandTarget(True, output_limit=4096)}))
    (row,) = items(database)
    (attempt,) = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert attempt.outcome == "succeeded" and attempt.output is not None
    stdout = attempt.output["stdout"]
    marker, _, kept = stdout.partition("\n")
    assert marker == f"[… {300_000 - 4096} bytes cut …]"
    assert len(kept.encode()) == 4096 and kept.endswith(f"{3000:099d}\n")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as started:
        yield started


def test_a_webhooks_status_and_body_are_kept_refused_or_accepted(
    database: Database, receiver: Receiver
) -> None:
    clock = FakeClock(START)
    add_job(database, target=f"webhook:{receiver.url}", options={"max_attempts": 3})
    fire(database, clock)
    receiver.answer(Answer(503, b"busy, come back"), Answer(200, b'{"accepted": 7}'))
    webhook = WebhookTarget(clock, KEYRING)
    try:
        work(database, clock, Targets({"webhook": webhook}))
    finally:
        webhook.close()
    (row,) = items(database)
    assert row.status == "succeeded" and len(receiver.deliveries) == 2
    log = RunService(Context(database, clock)).item_logs(TENANT, row.id)
    assert [(a.outcome, a.output) for a in log.attempts] == [
        ("retry", {"status": 503, "body": "busy, come back", "truncated": False}),
        ("succeeded", {"status": 200, "body": '{"accepted": 7}', "truncated": False}),
    ]


def test_output_shown_is_redacted_the_record_is_what_was_printed(database: Database) -> None:
    clock = FakeClock(START)
    add_command_job(database, "echo fetched https://u:hunter2@example.com/x?api_key=s3cr3t")
    fire(database, clock)
    work(database, clock, Targets({"command": CommandTarget(True)}))
    (row,) = items(database)
    log = RunService(Context(database, clock)).item_logs(TENANT, row.id)
    (attempt,) = log.attempts
    # The record keeps what the command printed; every reader gets it masked.
    assert attempt.output is not None and "hunter2" in attempt.output["stdout"]
    shown = attempt.to_dict()["output"]["stdout"]
    assert shown == "fetched https://***@example.com/x?api_key=***\n"
    assert "hunter2" not in str(log.to_dict()) and "s3cr3t" not in str(log.to_dict())


def test_a_refusals_long_body_is_kept_as_a_capped_excerpt(
    database: Database, receiver: Receiver
) -> None:
    clock = FakeClock(START)
    add_job(database, target=f"webhook:{receiver.url}", options={"max_attempts": 3})
    fire(database, clock)
    body = ("refused: " + "y" * 2000).encode()
    receiver.answer(Answer(422, body))
    webhook = WebhookTarget(clock, KEYRING)
    try:
        work(database, clock, Targets({"webhook": webhook}))
    finally:
        webhook.close()
    (row,) = items(database)
    assert row.status == "failed" and len(receiver.deliveries) == 1  # a 4xx: not retried
    (attempt,) = RunService(Context(database, clock)).item_logs(TENANT, row.id).attempts
    assert attempt.outcome == "failed" and attempt.output is not None
    assert attempt.output["status"] == 422 and attempt.output["truncated"] is True
    assert attempt.output["body"] == body.decode()[:EXCERPT_LIMIT]
