"""The issue's scenario, on both databases: a job that fails, a job that hangs past
`long`, a schedule whose dispatcher is stopped (`absent`) each produce exactly one
notification on each configured channel (webhook, Slack, email: real receivers
on loopback), and one recovery. Time is a FakeClock; the dispatcher, the alert
loop and the workers are the real ones."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime

import alert_handlers
import pytest
from alert_support import KEYRING, TENANT, WEBHOOK_SECRET, add_channels, receivers
from sqlalchemy import select
from webhook_receiver import signature_valid

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.alert_loop import AlertLoop
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import events
from cronplane.targets import Targets
from cronplane.targets.python import PythonTarget
from cronplane.targets.system import SystemTarget

SCOPE = Scope(TENANT, "billing", "prod")


def at(minute: int, second: int = 0) -> datetime:
    return datetime(2026, 3, 2, 10, minute, second, tzinfo=UTC)


def drain(worker: Worker) -> None:
    while worker.run_once():
        pass


def ledger(database: Database, code: str) -> list[dict[str, object]]:
    with database.read() as conn:
        rows = conn.execute(select(events).where(events.c.code == code).order_by(events.c.id))
        return [dict(row._mapping) for row in rows]


@pytest.fixture(autouse=True)
def handlers() -> None:
    alert_handlers.STARTED.clear()
    alert_handlers.RELEASE.clear()
    alert_handlers.FAILING.set()


def test_fail_hang_and_absent_notify_once_per_channel_and_recover_once(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The email's console link comes from the setting (the Slack channel has its own).
    monkeypatch.setenv("CRONPLANE_PUBLIC_URL", "https://cron.example.org/")
    clock = FakeClock(at(0, 30))
    service = ScheduleService(database, clock)
    for name, handler, options in [
        ("flaky", "flaky", {"max_attempts": 1}),
        ("hang", "hang", {}),
        ("beat", "ok", {}),
    ]:
        spec = JobSpec(name=name, target=f"python:alert_handlers:{handler}", options=options)
        service.register_job(TENANT, "billing", spec, actor="test")
    targets = Targets({"python": PythonTarget(), "system": SystemTarget(database, clock, KEYRING)})
    worker = Worker(database, clock, targets=targets, heartbeat=False)
    loop = AlertLoop(database, clock, holder="alerts-a")
    with receivers() as found:
        channels = tuple(add_channels(service, found))
        for name, condition, target, threshold in [
            ("fails", "failed", "nightly", None),
            ("hangs", "long", "hanging", 60),
            ("heartbeat", "absent", "beat", 90),
        ]:
            rule = RuleSpec(
                name=name,
                condition=condition,
                scope="schedule",
                stack="billing",
                environment="prod",
                target=target,
                threshold=threshold,
                channels=channels,
            )
            service.add_alert_rule(TENANT, rule, actor="test")
        service.create_schedule(SCOPE, ScheduleSpec("hang", "* * * * *", name="hanging"), actor="t")
        assert loop.step() == loop.interval and loop.term is not None  # the cursor starts here

        # 10:01 the hanging job starts and never ends (its worker is stuck in it).
        clock.set(at(1))
        node_a = Dispatcher(database, clock, holder="node-a")
        assert node_a.tick().fired == 1
        stuck = Worker(database, clock, targets=targets, heartbeat=False)
        hung = threading.Thread(target=stuck.run_once, daemon=True)
        hung.start()
        assert alert_handlers.STARTED.wait(10)
        service.create_schedule(
            SCOPE, ScheduleSpec("flaky", "* * * * *", name="nightly"), actor="t"
        )
        service.create_schedule(SCOPE, ScheduleSpec("beat", "* * * * *", name="beat"), actor="t")

        # 10:02 nightly fails, beat succeeds; hanging has run 65 s at the next pass.
        clock.set(at(2))
        assert node_a.tick().fired == 2
        drain(worker)
        clock.set(at(2, 5))
        loop.step()
        assert loop.last is not None and (loop.last.opened, loop.last.deliveries) == (2, 6)
        drain(worker)

        # Node A's dispatcher stops. Nothing fires; beat's success is missing by
        # 10:03 + 90 s, judged from the schedule, not from any event.
        clock.set(at(3, 5))
        loop.step()
        assert loop.last is not None and loop.last.opened == 0
        clock.set(at(4, 35))
        loop.step()
        assert loop.last is not None and (loop.last.opened, loop.last.deliveries) == (1, 3)
        drain(worker)
        # Still silent at the next expected occurrence: a repeat, not a new notification.
        clock.set(at(6, 35))
        loop.step()
        assert loop.last is not None and loop.last.deliveries == 0
        (absent,) = [a for a in service.list_alerts(TENANT, status="open") if a.rule == "heartbeat"]
        assert absent.condition == "absent" and absent.count == 2

        # Node B takes over: every schedule runs again, the stuck job ends, nightly passes.
        alert_handlers.FAILING.clear()
        alert_handlers.RELEASE.set()
        hung.join(10)
        node_b = Dispatcher(database, clock, holder="node-b")
        assert node_b.tick().fired == 3
        drain(worker)
        clock.set(at(6, 40))
        loop.step()
        assert loop.last is not None and (loop.last.recovered, loop.last.deliveries) == (3, 9)
        drain(worker)
        # With node B dispatching and every job passing, nothing is told again.
        for minute in (7, 8, 9):
            clock.set(at(minute))
            assert node_b.tick().fired == 3
            drain(worker)
            clock.set(at(minute, 40))
            loop.step()
            assert loop.last is not None and loop.last.deliveries == 0

        hooks = [d.document for d in found.webhook.deliveries]
        slacks = [d.document["text"] for d in found.slack.deliveries]
        mails = [m["Subject"] for m in found.mailbox.messages]
        bodies = [str(m.get_payload()) for m in found.mailbox.messages]

    # Exactly one notification and one recovery per condition, on every channel.
    expected = Counter(
        (kind, condition)
        for kind in ("opened", "recovered")
        for condition in ("failed", "long", "absent")
    )
    assert Counter((h["kind"], h["alert"]["condition"]) for h in hooks) == expected
    for delivery in found.webhook.deliveries:
        header = delivery.headers["X-Cronplane-Signature"]
        assert signature_valid(WEBHOOK_SECRET, header, delivery.body)
    assert len(slacks) == 6 and all(
        "https://cron.example.com/alerts?tenant=acme" in t for t in slacks
    )
    assert sum("RECOVERED" in t for t in slacks) == 3
    assert len(mails) == 6 and sum(str(s).startswith("[cronplane] RECOVERED") for s in mails) == 3
    assert {frm for frm, _ in found.mailbox.envelopes} == {"cronplane@example.com"}
    assert all("Console: https://cron.example.org/alerts?tenant=acme" in b for b in bodies)
    assert not any("localhost" in b for b in bodies)
    # Each delivery is in the tenant's ledger with its outcome; the alerts are closed.
    sent = ledger(database, ev.ALERT_SENT.text)
    assert len(sent) == 18 and {row["tenant"] for row in sent} == {TENANT}
    assert ledger(database, ev.ALERT_UNSENT.text) == []
    assert len(ledger(database, ev.ALERT_OPENED.text)) == 3
    assert len(ledger(database, ev.ALERT_RECOVERED.text)) == 3
    assert service.list_alerts(TENANT, status="open") == []
    assert len(service.list_alerts(TENANT, status="closed")) == 3
