"""Alert channels and the outbound rule (issue 33, SSRF): a channel whose host is a denied
address is refused at create and nothing is stored; a delivery to one is refused at send,
recorded failed with the coded message, and nothing reaches the receiver."""

from __future__ import annotations

from typing import Any

import pytest
from alert_support import KEYRING, TENANT
from test_outbound import CODE, START
from test_smtp_tls import delivery, failing_alert, relay

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.outbound import DENY_ALL_PRIVATE
from cronplane.errors import OutboundAddressDenied
from cronplane.service import ScheduleService
from cronplane.store.database import Database

MAIL = {"sender": "cronplane@example.com", "to": ["oncall@example.com"]}


@pytest.mark.parametrize(
    ("kind", "config"),
    [
        ("webhook", {"url": "http://169.254.169.254/latest/meta-data/"}),
        ("webhook", {"url": "https://0x7f.1:8443/hook"}),
        ("email", {"host": "127.0.0.1", "port": 25, **MAIL}),
        ("email", {"host": "10.0.0.25", "port": 587, **MAIL}),
        ("email", {"host": "localhost", "port": 25, **MAIL}),
    ],
)
def test_channel_to_a_denied_address_refused_at_create(
    database: Database, kind: str, config: dict[str, Any]
) -> None:
    service = ScheduleService(database, FakeClock(START), outbound=DENY_ALL_PRIVATE)
    secret = KEYRING.seal("s") if kind == "webhook" else None
    with pytest.raises(OutboundAddressDenied) as caught:
        service.add_alert_channel(TENANT, "c", kind, config, secret=secret, actor="t")
    assert str(caught.value).startswith(CODE)
    assert service.list_alert_channels(TENANT) == []


def test_mail_to_a_denied_address_refused_at_send(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The channel was stored while loopback was allowed; the worker's rule denies it now.
    monkeypatch.setattr("cronplane.targets.notify.outbound_policy", lambda: DENY_ALL_PRIVATE)
    with relay(None) as found:
        _, worker = failing_alert(database, {"port": found.port})
        assert worker.run_once()
    assert found.messages == [] and found.logins == []
    status, attempts, outcomes = delivery(database)
    assert (status, attempts) == ("failed", 1)  # refused: another attempt cannot help
    ((code, detail),) = outcomes
    assert code == ev.ALERT_UNSENT.text and detail["error"].startswith(CODE)
    assert "127.0.0.1" in detail["error"]
