"""Real receivers on loopback for the alert tests: an SMTP server (aiosmtpd) and
the signed-webhook receiver of the target tests; the channels that point at them."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import message_from_bytes
from email.message import Message
from typing import Any, TypeVar

from aiosmtpd.controller import Controller
from webhook_receiver import Receiver, running_receiver

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.service.alert_book import EvaluationReport
from cronplane.service.alerting import AlertEvaluator
from cronplane.store.database import Database
from cronplane.targets import Targets
from cronplane.targets.python import PythonTarget
from cronplane.targets.system import SystemTarget
from cronplane.targets.webhook import SecretKeyring

KEY = b"alert-tests-deployment-key-0123456789"
KEYRING = SecretKeyring(KEY)
WEBHOOK_SECRET = "whsec_alerts_receiver_secret"
TENANT = "acme"


@dataclass
class Mailbox:
    """What the SMTP server received."""

    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.messages.append(message_from_bytes(envelope.content))
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    """A real SMTP server on 127.0.0.1 (its own thread), stopped afterwards."""
    mailbox = Mailbox()
    port = free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()


@dataclass
class Receivers:
    """One receiver per channel kind."""

    webhook: Receiver
    slack: Receiver
    mailbox: Mailbox
    smtp_port: int


@contextmanager
def receivers() -> Iterator[Receivers]:
    """The webhook, Slack and SMTP receivers, all on loopback."""
    with running_receiver() as hook, running_receiver() as slack, smtp_server() as (box, port):
        yield Receivers(hook, slack, box, port)


def add_channels(service: ScheduleService, found: Receivers) -> list[str]:
    """One channel of each kind in TENANT, pointing at the receivers; their names."""
    service.add_alert_channel(
        TENANT,
        "ops-hook",
        "webhook",
        {"url": found.webhook.url},
        secret=KEYRING.seal(WEBHOOK_SECRET),
        actor="test",
    )
    service.add_alert_channel(
        TENANT,
        "ops-slack",
        "slack",
        {"console_url": "https://cron.example.com"},
        secret=KEYRING.seal(found.slack.url),
        actor="test",
    )
    service.add_alert_channel(
        TENANT,
        "ops-mail",
        "email",
        {
            "host": "127.0.0.1",
            "port": found.smtp_port,
            "sender": "cronplane@example.com",
            "to": ["oncall@example.com"],
        },
        secret=None,
        actor="test",
    )
    return ["ops-hook", "ops-slack", "ops-mail"]


START = datetime(2026, 3, 2, 10, 0, 30, tzinfo=UTC)


@dataclass
class AlertWorld:
    """A tenant with an `ok` and a `boom` job, the real receivers behind its channels, a
    dispatcher, a worker that delivers and an evaluator, all on one fake clock."""

    database: Database
    clock: FakeClock
    service: ScheduleService
    evaluator: AlertEvaluator
    dispatcher: Dispatcher
    worker: Worker
    found: Receivers

    def at(self, minute: int, second: int = 0) -> None:
        self.clock.set(START.replace(minute=minute, second=second))

    def evaluate(self) -> EvaluationReport:
        return self.evaluator.evaluate()

    def drain(self) -> None:
        while self.worker.run_once():
            pass


W = TypeVar("W", bound=AlertWorld)


@contextmanager
def alert_world(database: Database, kind: type[W]) -> Iterator[W]:
    """A world of class `kind` over `database` (its evaluator's cursor at the present)."""
    clock = FakeClock(START)
    service = ScheduleService(database, clock)
    for name, handler, options in [("ok", "ok", {}), ("boom", "boom", {"max_attempts": 1})]:
        spec = JobSpec(name=name, target=f"python:alert_handlers:{handler}", options=options)
        service.register_job(TENANT, "billing", spec, actor="test")
    targets = Targets({"python": PythonTarget(), "system": SystemTarget(database, clock, KEYRING)})
    worker = Worker(database, clock, targets=targets, heartbeat=False, jitter=lambda: 0.0)
    with receivers() as found:
        add_channels(service, found)
        evaluator = AlertEvaluator(database, clock)
        evaluator.evaluate()  # the cursor starts at the present
        yield kind(database, clock, service, evaluator, Dispatcher(database, clock), worker, found)
