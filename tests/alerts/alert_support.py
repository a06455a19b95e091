"""Real receivers on loopback for the alert tests: an SMTP server (aiosmtpd) and
the signed-webhook receiver of the target tests; the channels that point at them."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller
from webhook_receiver import Receiver, running_receiver

from cronplane.service import ScheduleService
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
