"""Email channels over STARTTLS, against a real aiosmtpd server on loopback that
holds a certificate signed by a CA made in the test: the channel trusts it through
`ca_file` (or SSL_CERT_FILE), logs in only after the upgrade, and never sends in
clear — a server that offers no STARTTLS, or a certificate nobody vouches for,
fails the delivery (recorded, retried by the queue)."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from alert_support import KEYRING, TENANT, free_port
from sqlalchemy import select
from tls_support import make_ca_and_server

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidChannel
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.worker import Worker
from cronplane.service import ScheduleService
from cronplane.service.alerting import AlertEvaluator
from cronplane.store.database import Database
from cronplane.store.tables import events, queue_items
from cronplane.targets import Targets
from cronplane.targets.python import PythonTarget
from cronplane.targets.system import SystemTarget

SCOPE = Scope(TENANT, "billing", "prod")
START = datetime(2026, 3, 2, 10, 0, 30, tzinfo=UTC)
PASSWORD = "smtp-password-4711"


@dataclass
class Relay:
    """What the server saw: logins (user, password, over TLS?) and messages (over TLS?)."""

    port: int = 0
    logins: list[tuple[str, str, bool]] = field(default_factory=list)
    messages: list[tuple[Message, bool]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        user, password = data.login.decode(), data.password.decode()
        with self.lock:
            self.logins.append((user, password, session.ssl is not None))
        return AuthResult(success=password == PASSWORD)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.messages.append((message_from_bytes(envelope.content), session.ssl is not None))
        return "250 OK"


@contextmanager
def relay(tls: ssl.SSLContext | None) -> Iterator[Relay]:
    """A server that, with `tls`, requires STARTTLS before anything else; without it,
    offers none. Either way it would take AUTH in clear (auth_require_tls off): only
    the channel keeps the password off the wire."""
    found = Relay(port=free_port())
    controller = Controller(
        found,
        hostname="127.0.0.1",
        port=found.port,
        tls_context=tls,
        require_starttls=tls is not None,
        authenticator=found.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield found
    finally:
        controller.stop()


@pytest.fixture
def certificates(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    return make_ca_and_server(tmp_path)


def failing_alert(database: Database, config: dict[str, Any]) -> tuple[FakeClock, Worker]:
    """A mail channel with `config`, a failing schedule with a `failed` rule on it, and
    the pass that enqueues the notification (not delivered yet)."""
    clock = FakeClock(START)
    service = ScheduleService(database, clock)
    spec = JobSpec(name="boom", target="python:alert_handlers:boom", options={"max_attempts": 1})
    service.register_job(TENANT, "billing", spec, actor="test")
    mail = {"host": "127.0.0.1", "sender": "cronplane@example.com", "to": ["oncall@example.com"]}
    service.add_alert_channel(
        TENANT, "mail", "email", {**mail, "username": "alerts", **config},
        secret=KEYRING.seal(PASSWORD), actor="test",
    )  # fmt: skip
    service.add_alert_rule(TENANT, RuleSpec("fails", "failed", channels=("mail",)), actor="t")
    targets = Targets({"python": PythonTarget(), "system": SystemTarget(database, clock, KEYRING)})
    worker = Worker(database, clock, targets=targets, heartbeat=False, jitter=lambda: 0.0)
    evaluator = AlertEvaluator(database, clock)
    evaluator.evaluate()  # the cursor starts here
    service.create_schedule(SCOPE, ScheduleSpec("boom", "* * * * *", name="bad"), actor="t")
    clock.set(START.replace(minute=1, second=0))
    Dispatcher(database, clock).tick()
    assert worker.run_once()  # the job fails
    clock.set(START.replace(minute=1, second=5))
    assert evaluator.evaluate().deliveries == 1
    return clock, worker


def delivery(database: Database) -> tuple[str, int, list[Any]]:
    """The delivery item's status and attempts, and the ledger's delivery outcomes."""
    with database.read() as conn:
        item = conn.execute(
            select(queue_items.c.status, queue_items.c.attempts).where(
                queue_items.c.job == "deliver-alert"
            )
        ).one()
        codes = (ev.ALERT_SENT.text, ev.ALERT_UNSENT.text)
        outcomes = conn.execute(
            select(events.c.code, events.c.detail)
            .where(events.c.code.in_(codes))
            .order_by(events.c.id)
        ).all()
    return item.status, item.attempts, list(outcomes)


def test_starttls_with_ca_file_delivers_and_logs_in_only_over_tls(
    database: Database, certificates: tuple[Path, ssl.SSLContext]
) -> None:
    ca_file, server_tls = certificates
    with relay(server_tls) as found:
        config = {"port": found.port, "starttls": True, "ca_file": str(ca_file)}
        _, worker = failing_alert(database, config)
        assert worker.run_once()
    assert found.logins == [("alerts", PASSWORD, True)]
    ((message, over_tls),) = found.messages
    assert over_tls and str(message["Subject"]).startswith("[cronplane] FAILED")
    status, attempts, outcomes = delivery(database)
    assert (status, attempts) == ("succeeded", 1)
    assert [code for code, _ in outcomes] == [ev.ALERT_SENT.text]


def test_ssl_cert_file_is_trusted_without_ca_file(
    database: Database,
    certificates: tuple[Path, ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ca_file, server_tls = certificates
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    with relay(server_tls) as found:
        _, worker = failing_alert(database, {"port": found.port, "starttls": True})
        assert worker.run_once()
    assert found.logins == [("alerts", PASSWORD, True)] and len(found.messages) == 1
    assert delivery(database)[0] == "succeeded"


def test_an_untrusted_certificate_fails_before_any_credential_and_is_retried(
    database: Database,
    certificates: tuple[Path, ssl.SSLContext],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _, server_tls = certificates
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _ = make_ca_and_server(other)  # a CA that did not sign the server's cert
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with relay(server_tls) as found:
        config = {"port": found.port, "starttls": True, "ca_file": str(other_ca)}
        _, worker = failing_alert(database, config)
        assert worker.run_once()
    assert found.logins == [] and found.messages == []
    status, attempts, outcomes = delivery(database)
    assert (status, attempts) == ("queued", 1)  # waiting for its retry
    ((code, detail),) = outcomes
    assert code == ev.ALERT_UNSENT.text and "SSLCertVerificationError" in detail["error"]
    assert PASSWORD not in detail["error"]


def test_a_server_without_starttls_fails_the_delivery_and_never_sends_in_clear(
    database: Database,
) -> None:
    with relay(None) as found:
        clock, worker = failing_alert(database, {"port": found.port, "starttls": True})
        assert worker.run_once()
        clock.set(START.replace(minute=2, second=0))  # past the first backoff (5 s)
        assert worker.run_once()
    # The server would have taken the password and the message in clear: it got neither.
    assert found.logins == [] and found.messages == []
    status, attempts, outcomes = delivery(database)
    assert (status, attempts) == ("queued", 2)
    assert [code for code, _ in outcomes] == [ev.ALERT_UNSENT.text] * 2
    assert all("SMTPNotSupportedError" in detail["error"] for _, detail in outcomes)
    assert [detail["attempt"] for _, detail in outcomes] == [1, 2]


def test_ca_file_needs_starttls(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))
    config = {"host": "h", "sender": "a@b.c", "to": ["o@b.c"], "ca_file": "/etc/ca.pem"}
    with pytest.raises(InvalidChannel) as caught:
        service.add_alert_channel(TENANT, "mail", "email", config, secret=None, actor="t")
    assert caught.value.detail == {"field": "config.ca_file"}
    assert service.list_alert_channels(TENANT) == []


def test_an_unreadable_ca_file_fails_the_delivery_at_once(
    database: Database, certificates: tuple[Path, ssl.SSLContext], tmp_path: Path
) -> None:
    _, server_tls = certificates
    with relay(server_tls) as found:
        config = {"port": found.port, "starttls": True, "ca_file": str(tmp_path / "missing.pem")}
        _, worker = failing_alert(database, config)
        assert worker.run_once()
    assert found.logins == [] and found.messages == []
    status, attempts, outcomes = delivery(database)
    assert (status, attempts) == ("failed", 1)  # retrying cannot help: no retry
    ((code, detail),) = outcomes
    assert code == ev.ALERT_UNSENT.text and "config.ca_file unreadable" in detail["error"]
