"""The evaluator's conditions one by one, on both databases: late, skipped (by reason),
re-notify, history is not news, disabled schedules are silent, rule removal; and
delivery: retried with backoff through the queue, a broken channel never blocks
dispatch, secrets never reach the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from alert_support import (
    KEYRING,
    START,
    TENANT,
    AlertWorld,
    add_channels,
    alert_world,
    receivers,
)
from sqlalchemy import select
from webhook_receiver import Answer

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.service.alerting import AlertEvaluator
from cronplane.store.database import Database
from cronplane.store.tables import alert_channels, events, queue_items

SCOPE = Scope(TENANT, "billing", "prod")


class World(AlertWorld):
    """The shared alert world, with this file's own helpers."""

    def rule(self, name: str, condition: str, **given: object) -> None:
        channels = given.pop("channels", ("ops-hook",))
        spec = RuleSpec(name, condition, channels=channels, **given)  # type: ignore[arg-type]
        self.service.add_alert_rule(TENANT, spec, actor="test")

    def schedule(self, name: str, job: str, cron: str = "* * * * *") -> None:
        self.service.create_schedule(SCOPE, ScheduleSpec(job, cron, name=name), actor="test")

    def ledger(self, code: str) -> list[dict[str, object]]:
        with self.database.read() as conn:
            query = select(events).where(events.c.code == code).order_by(events.c.id)
            return [dict(row._mapping) for row in conn.execute(query)]


@pytest.fixture
def world(database: Database) -> Iterator[World]:
    with alert_world(database, World) as made:
        yield made


def test_history_before_the_first_pass_is_not_news(database: Database) -> None:
    clock = FakeClock(START)
    service = ScheduleService(database, clock)
    spec = JobSpec(name="boom", target="python:alert_handlers:boom", options={"max_attempts": 1})
    service.register_job(TENANT, "billing", spec, actor="test")
    service.create_schedule(SCOPE, ScheduleSpec("boom", "* * * * *", name="b"), actor="t")
    clock.set(START + timedelta(seconds=30))
    Dispatcher(database, clock).tick()
    Worker(database, clock, heartbeat=False).run_once()
    clock.advance(10)
    with receivers() as found:
        add_channels(service, found)
        service.add_alert_rule(TENANT, RuleSpec("f", "failed", channels=("ops-hook",)), actor="t")
        evaluator = AlertEvaluator(database, clock)
        assert evaluator.evaluate().opened == 0  # the failure happened before
        assert evaluator.evaluate().opened == 0


def test_late_opens_while_queued_and_recovers_when_it_runs(world: World) -> None:
    world.rule("late", "late", threshold=90, scope="job", stack="billing",
               environment="prod", target="ok")  # fmt: skip
    world.schedule("beat", "ok", cron="5 10 * * *")
    world.at(5)
    assert world.dispatcher.tick().fired == 1
    world.at(6, 29)
    assert world.evaluate().opened == 0  # 89 s: not yet
    world.at(6, 31)
    report = world.evaluate()
    assert (report.opened, report.deliveries) == (1, 1)
    (alert,) = world.service.list_alerts(TENANT, status="open")
    assert alert.condition == "late" and alert.detail["seconds"] == 91
    world.at(6, 40)
    assert world.evaluate().deliveries == 0  # still late: the same item, no repeat
    world.drain()  # the item runs (and the delivery goes out)
    world.at(6, 45)
    report = world.evaluate()
    assert report.recovered == 1 and world.service.list_alerts(TENANT, status="open") == []


def test_skipped_opens_for_the_reasons_a_rule_names(world: World) -> None:
    world.rule("overlaps", "skipped", reasons=("overlap",))
    world.rule("misfires", "skipped", reasons=("misfire",))
    world.rule("any-skip", "skipped")
    world.schedule("busy", "ok")
    world.at(1)
    world.dispatcher.tick()  # 10:01 fires; nobody runs it
    world.at(2)
    assert world.dispatcher.tick().counts  # 10:02 skipped: still queued
    world.at(2, 5)
    report = world.evaluate()
    assert report.opened == 2
    rules = sorted(a.rule for a in world.service.list_alerts(TENANT, status="open"))
    assert rules == ["any-skip", "overlaps"]
    (alert, _) = world.service.list_alerts(TENANT, status="open")
    assert alert.detail["reason"] == "overlap"


def test_a_repeat_updates_the_alert_and_renotifies_after_the_interval(world: World) -> None:
    world.rule("fails", "failed", renotify=180, channels=("ops-mail",))
    world.schedule("bad", "boom")
    counts = []
    for minute in (1, 2, 3, 4):
        world.at(minute)
        world.dispatcher.tick()
        world.drain()
        world.at(minute, 5)
        counts.append(world.evaluate())
        world.drain()
    assert [(r.opened, r.repeated) for r in counts] == [(1, 0), (0, 0), (0, 0), (0, 1)]
    (alert,) = world.service.list_alerts(TENANT, status="open")
    assert alert.count == 4
    subjects = [m["Subject"] for m in world.found.mailbox.messages]
    assert len(subjects) == 2 and "(still open)" in subjects[1] and "x4" in subjects[1]


def test_absent_is_silent_for_a_disabled_schedule(world: World) -> None:
    world.rule("heartbeat", "absent", threshold=60, scope="schedule", stack="billing",
               environment="prod", target="quiet")  # fmt: skip
    world.schedule("quiet", "ok")
    world.service.disable_schedule(SCOPE, "quiet", actor="test")
    world.at(5)
    assert world.evaluate().opened == 0
    world.service.enable_schedule(SCOPE, "quiet", actor="test")
    world.at(9)
    assert world.evaluate().opened == 1


def test_removing_a_rule_closes_its_alerts_without_a_notification(world: World) -> None:
    world.rule("fails", "failed")
    world.schedule("bad", "boom")
    world.at(1)
    world.dispatcher.tick()
    world.drain()
    world.at(1, 5)
    assert world.evaluate().opened == 1
    world.service.remove_alert_rule(TENANT, "fails", actor="test")
    assert world.service.list_alerts(TENANT, status="open") == []
    assert world.evaluate().deliveries == 0


def test_a_failing_receiver_is_retried_with_backoff_and_told_once(world: World) -> None:
    world.found.webhook.answer(Answer(503), Answer(500))
    world.found.slack.answer(Answer(404))  # permanent: fails at once, no retry
    world.rule("fails", "failed", channels=("ops-hook", "ops-slack"))
    world.schedule("bad", "boom")
    world.at(1)
    world.dispatcher.tick()
    world.drain()
    world.at(1, 5)
    assert world.evaluate().deliveries == 2
    world.drain()
    assert len(world.found.webhook.deliveries) == 1
    world.at(1, 11)  # the first retry waits 5 s (DELIVER_OPTIONS), the second 10 s
    world.drain()
    world.at(1, 22)
    world.drain()
    world.at(5)
    world.drain()
    hooks = world.found.webhook.deliveries
    assert len(hooks) == 3 and len({d.headers["X-Cronplane-Delivery"] for d in hooks}) == 1
    assert [d.headers["X-Cronplane-Attempt"] for d in hooks] == ["1", "2", "3"]
    assert len(world.found.slack.deliveries) == 1
    unsent = world.ledger(ev.ALERT_UNSENT.text)
    assert [u["detail"]["channel"] for u in unsent] == ["ops-hook", "ops-slack", "ops-hook"]
    assert [s["detail"]["channel"] for s in world.ledger(ev.ALERT_SENT.text)] == ["ops-hook"]
    # The Slack URL is that channel's secret: no event, error or item carries it.
    with world.database.read() as conn:
        texts = [str(tuple(r)) for r in conn.execute(select(events))]
        texts += [str(tuple(r)) for r in conn.execute(select(queue_items))]
        sealed = conn.execute(select(alert_channels.c.secret)).scalars().all()
    assert not any(world.found.slack.url in t for t in texts)
    assert not any(s in t for s in sealed if s for t in texts)


def test_a_broken_channel_never_blocks_dispatch(world: World) -> None:
    world.service.add_alert_channel(
        TENANT, "dead", "webhook", {"url": "http://127.0.0.1:9/nothing"},
        secret=KEYRING.seal("s"), actor="test",
    )  # fmt: skip
    world.rule("fails", "failed", channels=("dead",))
    world.schedule("bad", "boom")
    world.schedule("good", "ok")
    for minute in (1, 2, 3):
        world.at(minute)
        assert world.dispatcher.tick().fired == 2
        world.drain()
        world.at(minute, 5)
        world.evaluate()
    with world.database.read() as conn:
        rows = conn.execute(select(queue_items.c.job, queue_items.c.status)).all()
    assert sorted(s for j, s in rows if j == "ok") == ["succeeded"] * 3
    assert [s for j, s in rows if j == "deliver-alert"] == ["queued"]  # waiting for its retry


def test_long_opens_once_and_recovers_once_over_a_backlog_of_long_runs(world: World) -> None:
    # 20 items of one schedule run one after another, 100 s each (threshold 60 s):
    # between two long runs the alert must not clear and reopen.
    from cronplane.store import claims, outcomes
    from cronplane.store.tables import schedules
    from firing_support import enqueue_items, item_row

    world.rule("long", "long", threshold=60, scope="job", stack="billing",
               environment="prod", target="ok")  # fmt: skip
    world.schedule("beat", "ok", cron="0 0 1 1 *")
    with world.database.read() as conn:
        sid = conn.execute(select(schedules.c.id).where(schedules.c.name == "beat")).scalar_one()
    rows = [item_row("ok", now=world.clock.now()) for _ in range(20)]
    for row in rows:
        row |= {"tenant": TENANT, "stack": "billing", "environment": "prod", "schedule_id": sid}
    enqueue_items(world.database, rows)
    opened = recovered = 0

    def evaluate() -> None:
        nonlocal opened, recovered
        report = world.evaluate()
        opened, recovered = opened + report.opened, recovered + report.recovered

    lease = timedelta(seconds=300)
    for _ in range(20):
        start = world.clock.now()
        with world.database.begin() as conn:
            (item,) = claims.claim_batch(conn, "w", start, lease, 1, fair=False)
        for seconds in (30, 70, 99):
            world.clock.set(start + timedelta(seconds=seconds))
            evaluate()
        end = world.clock.advance(1)
        with world.database.begin() as conn:
            assert outcomes.succeed_many(
                conn, [outcomes.Success(item.id, None, start, end)], "w", end
            )
        evaluate()
    assert (opened, recovered) == (1, 1)
    assert world.service.list_alerts(TENANT, status="open") == []


def test_the_console_link_comes_from_the_setting_or_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from uuid import uuid4

    from cronplane.core.alerts import Channel
    from cronplane.targets.notify import console_link

    channel = Channel(uuid4(), "acme", "mail", "email", {}, None, START)
    monkeypatch.delenv("CRONPLANE_PUBLIC_URL", raising=False)
    assert console_link(channel, "acme") is None  # never a guessed localhost
    monkeypatch.setenv("CRONPLANE_PUBLIC_URL", "https://cron.example.org/")
    assert console_link(channel, "acme") == "https://cron.example.org/alerts?tenant=acme"


def test_a_failed_delivery_is_visible_on_the_alert_its_schedule_and_the_metric(
    world: World,
) -> None:
    """Issue 39: a notification that does not land is seen where the alert is (each
    channel's state and error), in the schedule's history, in `alert ls` and as a gauge."""
    from cronplane.api.alerts import AlertOut
    from cronplane.cli.alert_cmd import delivery_text
    from cronplane.store.alert_deliveries import open_by_delivery

    world.found.webhook.answer(Answer(503))  # then the default: accepted
    world.found.slack.answer(Answer(404))  # permanent
    world.rule("fails", "failed", channels=("ops-hook", "ops-slack"))
    world.schedule("bad", "boom")
    world.at(1)
    world.dispatcher.tick()
    world.drain()
    world.at(1, 5)
    world.evaluate()
    with world.database.read() as conn:
        assert open_by_delivery(conn)["none"] == 1  # opened, nothing tried yet
    world.drain()
    [alert] = world.service.list_alerts(TENANT, status="open")
    hook, slack = alert.deliveries["ops-hook"], alert.deliveries["ops-slack"]
    assert hook["state"] == "retrying" and "503" in hook["error"]
    assert slack["state"] == "failed" and "404" in slack["error"]
    assert alert.delivery == "failed"  # the worst channel's
    assert "ops-slack failed: " in delivery_text(alert) and "ops-hook retrying" in delivery_text(
        alert
    )
    shown = AlertOut.model_validate(alert.to_dict())  # the API's answer carries it
    assert shown.deliveries["ops-slack"].state == "failed"
    # The schedule's own history has each failed attempt, with its channel and error.
    history = world.service.schedule_history(SCOPE, "bad", limit=50)
    unsent = [e for e in history if e.code == ev.ALERT_UNSENT.text]
    assert {e.detail["channel"] for e in unsent} == {"ops-hook", "ops-slack"}
    world.at(1, 11)  # the retry (5 s later) lands
    world.drain()
    [alert] = world.service.list_alerts(TENANT, status="open")
    assert alert.deliveries["ops-hook"]["state"] == "sent"
    assert alert.deliveries["ops-hook"]["error"] is None
    assert alert.deliveries["ops-slack"]["state"] == "failed"  # a success elsewhere hides nothing
    with world.database.read() as conn:
        assert open_by_delivery(conn) == {"failed": 1, "retrying": 0, "sent": 0, "none": 0}
    # The evaluator writing the alert back (a re-notify pass) keeps the deliveries.
    world.at(3)
    world.dispatcher.tick()
    world.drain()
    world.evaluate()
    [alert] = world.service.list_alerts(TENANT, status="open")
    assert alert.deliveries["ops-slack"]["state"] == "failed"
