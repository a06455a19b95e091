"""Paused past a limit, on both databases: a `skipped` rule with a threshold (its one
reason `paused`) opens once a schedule has been paused longer than N s — judged from
`paused_at`, not from the skips the pause records — re-notifies after its interval,
recovers when an operator resumes or when the pause's until passes, and a re-pause
is a new alert. Real receivers, dispatcher and evaluator; time is a FakeClock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from alert_support import KEYRING, TENANT, Receivers, add_channels, receivers
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidAlertRule
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.service.alerting import AlertEvaluator
from cronplane.store.database import Database
from cronplane.store.tables import events
from cronplane.targets import Targets
from cronplane.targets.python import PythonTarget
from cronplane.targets.system import SystemTarget

SCOPE = Scope(TENANT, "billing", "prod")


def at(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 3, 2, 10, minute, second, tzinfo=UTC)


@pytest.fixture
def found() -> Iterator[Receivers]:
    with receivers() as running:
        yield running


def test_a_pause_past_the_limit_alerts_once_and_recovers_when_it_ends(
    database: Database, found: Receivers
) -> None:
    clock = FakeClock(at(0, 30))
    service = ScheduleService(database, clock)
    service.register_job(TENANT, "billing", JobSpec("ok", "python:alert_handlers:ok"), actor="t")
    add_channels(service, found)
    rule = RuleSpec(
        "paused-long", "skipped", scope="schedule", stack="billing", environment="prod",
        target="nightly", threshold=600, reasons=("paused",), channels=("ops-hook",),
        renotify=600,
    )  # fmt: skip
    service.add_alert_rule(TENANT, rule, actor="test")
    service.create_schedule(SCOPE, ScheduleSpec("ok", "* * * * *", name="nightly"), actor="t")
    service.create_schedule(SCOPE, ScheduleSpec("ok", "* * * * *", name="other"), actor="t")
    targets = Targets({"python": PythonTarget(), "system": SystemTarget(database, clock, KEYRING)})
    worker = Worker(database, clock, targets=targets, heartbeat=False, jitter=lambda: 0.0)
    dispatcher = Dispatcher(database, clock)
    evaluator = AlertEvaluator(database, clock)
    evaluator.evaluate()  # the cursor starts here

    def step(minute: int, second: int = 0) -> tuple[int, int, int, int]:
        clock.set(at(minute, second))
        report = evaluator.evaluate()
        while worker.run_once():
            pass
        return report.opened, report.repeated, report.recovered, report.deliveries

    service.pause_schedule(SCOPE, "nightly", actor="ann", note="migrating")
    service.pause_schedule(SCOPE, "other", actor="ann")  # no rule watches it
    clock.set(at(5))
    assert dispatcher.tick().counts  # the paused occurrences are recorded as skips
    assert step(5, 5) == (0, 0, 0, 0)  # skips, but paused only 275 s
    assert step(10, 29) == (0, 0, 0, 0)  # 599 s
    assert step(10, 31) == (1, 0, 0, 1)  # 601 s: open, told once
    (alert,) = service.list_alerts(TENANT, status="open")
    assert (alert.rule, alert.schedule, alert.condition) == ("paused-long", "nightly", "skipped")
    assert alert.detail["reason"] == "paused" and alert.detail["seconds"] == 601
    assert (alert.detail["paused_by"], alert.detail["note"]) == ("ann", "migrating")
    clock.set(at(11))
    dispatcher.tick()
    assert step(11, 5) == (0, 0, 0, 0)  # still paused: the same instance, nothing new
    assert step(20, 31) == (0, 1, 0, 1)  # the re-notify interval passed: still open
    service.resume_schedule(SCOPE, "nightly", actor="bob")
    assert step(21) == (0, 0, 1, 1)  # resumed: recovered, told once

    # A new pause with an until: a new alert, closed when the until passes, even
    # before a dispatcher clears the pause.
    service.pause_schedule(SCOPE, "nightly", actor="ann", until="2026-03-02T10:40:00Z")
    assert step(31, 1) == (1, 0, 0, 1)
    assert step(39, 59) == (0, 0, 0, 0)
    assert step(40, 1) == (0, 0, 1, 1)
    assert service.list_alerts(TENANT, status="open") == []
    assert len(service.list_alerts(TENANT, status="closed")) == 2

    kinds = [(d.document["kind"], d.document["alert"]["count"]) for d in found.webhook.deliveries]
    first, second = kinds[:3], kinds[3:]
    assert first == [("opened", 1), ("repeated", 1), ("recovered", 1)]
    assert second == [("opened", 1), ("recovered", 1)]
    with database.read() as conn:
        opened = conn.execute(
            select(events.c.schedule_name).where(events.c.code == ev.ALERT_OPENED.text)
        ).all()
    assert [row.schedule_name for row in opened] == ["nightly", "nightly"]


@pytest.mark.parametrize("reasons", [(), ("overlap",), ("overlap", "paused")])
def test_a_threshold_on_skipped_needs_the_one_reason_paused(
    database: Database, found: Receivers, reasons: tuple[str, ...]
) -> None:
    service = ScheduleService(database, FakeClock(at(0)))
    add_channels(service, found)
    rule = RuleSpec("x", "skipped", threshold=60, reasons=reasons, channels=("ops-hook",))
    with pytest.raises(InvalidAlertRule) as caught:
        service.add_alert_rule(TENANT, rule, actor="test")
    assert caught.value.detail == {"field": "threshold"}
    assert service.list_alert_rules(TENANT) == []
