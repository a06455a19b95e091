"""Outbound connections (issue 33, SSRF): the address rule against a model, odd spellings,
refusals at create (service, HTTP, the installed CLI) and at send (real receivers on
loopback, a name that rebinds to a denied address), and pinned connections."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import make_api
from cli_process import run_cronplane
from hypothesis import given
from hypothesis import strategies as st
from test_webhook import KEYRING, scheduled, work
from webhook_receiver import Receiver, running_receiver

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.outbound import (
    DENY_ALL_PRIVATE,
    OutboundPolicy,
    literal_address,
    parse_allow,
)
from cronplane.errors import InvalidRequest, OutboundAddressDenied
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.targets.webhook import WebhookTarget
from firing_support import START, items

LOOPBACK = parse_allow("127.0.0.1,::1")
CODE = "X403270OUTDNY"

# -- the rule, against a model written from the issue --------------------------------

MODEL_DENIED = [
    ipaddress.ip_network(cidr)
    for cidr in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "fe80::/10",
        "fc00::/7",
        "ff00::/8",
    )
]
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def carried(address: Any) -> Any:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), else None."""
    if address.version == 4:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def model_denies(address: Any, allowed: list[Any]) -> bool | None:
    """True: the issue says deny; False: allowed; None: the model's table has no opinion."""
    if any(address.version == n.version and address in n for n in allowed):
        return False
    if any(address.version == n.version and address in n for n in MODEL_DENIED):
        return True
    inner = carried(address)
    if inner is not None:
        return model_denies(inner, allowed)
    return None


def special(network: str) -> st.SearchStrategy[Any]:
    return st.ip_addresses(network=network)


v4 = st.one_of(
    st.ip_addresses(v=4),
    *(special(str(n)) for n in MODEL_DENIED if n.version == 4),
)
addresses = st.one_of(
    v4,
    st.ip_addresses(v=6),
    *(special(str(n)) for n in MODEL_DENIED if n.version == 6),
    v4.map(lambda a: ipaddress.IPv6Address(f"::ffff:{a}")),
    v4.map(lambda a: ipaddress.IPv6Address((0x64FF9B << 96) | int(a))),
    st.tuples(v4, st.integers(0, 2**80 - 1)).map(
        lambda t: ipaddress.IPv6Address((0x2002 << 112) | (int(t[0]) << 80) | t[1])
    ),
)
allowlists = st.lists(
    st.sampled_from(["127.0.0.0/8", "10.0.0.0/8", "::1/128", "fc00::/7", "169.254.169.254/32"]),
    max_size=2,
)


@given(addresses, allowlists)
def test_rule_matches_the_model(address: Any, allow: list[str]) -> None:
    policy = parse_allow(",".join(allow))
    expected = model_denies(address, [ipaddress.ip_network(a) for a in allow])
    reason = policy.reason(address)
    if expected is True:
        assert reason is not None, address
    elif expected is False:
        assert reason is None, address
    else:  # beyond the table: only a global (public) address may pass
        inner = carried(address) or address
        if reason is None:
            assert inner.is_global and not inner.is_multicast, address
        elif inner is address and address.is_global and not address.is_multicast:
            pytest.fail(f"public {address} denied: {reason}")
    with pytest.raises(OutboundAddressDenied) if reason else _nothing():
        policy.check("h.example", [ipaddress.ip_address("8.8.8.8"), address])


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


@pytest.mark.parametrize(
    "host",
    ["0x7f.1", "2130706433", "017700000001", "127.1", "0177.0.0.01", "0x7f000001", "127.0.0.1"],
)
def test_odd_ipv4_spellings_read_like_the_resolver(host: str) -> None:
    (first, *_) = socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)  # numeric: no DNS
    assert str(literal_address(host)) == first[4][0] == "127.0.0.1"
    with pytest.raises(OutboundAddressDenied, match="loopback"):
        DENY_ALL_PRIVATE.check(host, [literal_address(host)])  # type: ignore[list-item]


@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4), st.data())
def test_literal_address_is_inet_aton(parts: list[int], data: st.DataObject) -> None:
    spell = data.draw(st.sampled_from([str, hex, lambda n: "0" + oct(n)[2:]]))
    host = ".".join(spell(n) for n in parts)
    try:
        expected: Any = ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        expected = None
    assert literal_address(host) == expected


def test_metadata_and_names_in_the_message() -> None:
    with pytest.raises(OutboundAddressDenied) as caught:
        DENY_ALL_PRIVATE.check("metadata.internal", [ipaddress.ip_address("169.254.169.254")])
    error = caught.value
    assert str(error).startswith(CODE) and error.status == 403 and error.exit_code == 6
    assert "metadata.internal" in error.message and "169.254.169.254" in error.message
    assert "CRONPLANE_OUTBOUND_ALLOW" in error.message
    assert error.detail == {
        "host": "metadata.internal",
        "address": "169.254.169.254",
        "setting": "CRONPLANE_OUTBOUND_ALLOW",
    }


def test_allow_setting() -> None:
    policy = parse_allow(" 10.1.0.0/16, hooks.internal. ,::1 ")
    assert policy.reason(ipaddress.ip_address("10.1.2.3")) is None
    assert policy.reason(ipaddress.ip_address("10.2.0.1")) == "private"
    policy.check("HOOKS.internal", [ipaddress.ip_address("192.168.1.1")])  # a named host
    assert parse_allow("") == parse_allow(None) == OutboundPolicy()
    with pytest.raises(InvalidRequest, match="CRONPLANE_OUTBOUND_ALLOW"):
        parse_allow("10.0.0.0/33x")


# -- at create -------------------------------------------------------------------------

DENIED_URLS = [
    "http://127.0.0.1:9/x",
    "http://0x7f.1/x",
    "http://2130706433/x",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0:8080/",
    "http://10.0.0.5/hook",
    "http://100.64.0.1/",
    "https://localhost:8443/hook",  # a name: resolved at create
]


@pytest.mark.parametrize("url", DENIED_URLS)
def test_create_refuses_a_denied_webhook(database: Database, url: str) -> None:
    service = ScheduleService(database, FakeClock(START), outbound=DENY_ALL_PRIVATE)
    with pytest.raises(OutboundAddressDenied):
        service.register_job("acme", "s", JobSpec(name="hook", target=f"webhook:{url}"), actor="t")
    assert service.list_jobs("acme", None) == []


def test_update_refuses_too(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START), outbound=DENY_ALL_PRIVATE)
    service.register_job(
        "acme", "s", JobSpec(name="hook", target="webhook:https://8.8.8.8/x"), actor="t"
    )
    with pytest.raises(OutboundAddressDenied):
        service.update_job(
            "acme", "s", "hook", JobPatch(target="webhook:http://192.168.0.1/"), actor="t"
        )
    assert service.get_job("acme", "s", "hook").target == "webhook:https://8.8.8.8/x"


def test_http_create_answers_403(database: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRONPLANE_OUTBOUND_ALLOW", "")
    api = make_api(database)
    for url in ("http://169.254.169.254/", "http://0x7f.1:8080/"):
        answer = api.call(
            "POST", "/tenants/acme/jobs", json={"name": "h", "target": f"webhook:{url}"}
        )
        assert answer.status_code == 403 and answer.json()["code"] == CODE, answer.text
        assert "CRONPLANE_OUTBOUND_ALLOW" in answer.json()["message"]
    assert api.call("GET", "/tenants/acme/jobs").json()["items"] == []


def test_cli_create_exits_6(tmp_path: Path) -> None:
    env = {
        "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "CRONPLANE_TENANT": "acme",
        "CRONPLANE_OUTBOUND_ALLOW": "",
    }
    args = ("job", "add", "h", "--target", "webhook:http://169.254.169.254/")
    refused = run_cronplane(*args, env=env, cwd=tmp_path)
    assert refused.code == 6 and CODE in refused.stderr, refused
    allowed = run_cronplane(
        *args, env={**env, "CRONPLANE_OUTBOUND_ALLOW": "169.254.169.254"}, cwd=tmp_path
    )
    assert allowed.code == 0, allowed


def test_a_name_that_does_not_resolve_is_accepted_at_create(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START), outbound=DENY_ALL_PRIVATE)
    target = "webhook:https://nothing-here.invalid/hook"
    assert service.register_job("acme", "s", JobSpec(name="h", target=target), actor="t")


# -- at send ---------------------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as started:
        yield started


def deliver(database: Database, url: str, policy: OutboundPolicy) -> Any:
    clock = FakeClock(START)
    target = WebhookTarget(clock, KEYRING, policy)
    try:
        scheduled(database, clock, url, {}, max_attempts=3)
        work(database, clock, target)
    finally:
        target.close()
    (item,) = items(database)
    return item


def test_loopback_receiver_refused_by_default(database: Database, receiver: Receiver) -> None:
    item = deliver(database, receiver.url, DENY_ALL_PRIVATE)
    assert item.status == "failed" and item.attempts == 1  # refused: no retry can help
    assert item.error.startswith(CODE) and "127.0.0.1" in item.error
    assert receiver.deliveries == []


def test_loopback_receiver_reached_when_allowed(database: Database, receiver: Receiver) -> None:
    item = deliver(database, receiver.url, LOOPBACK)
    assert item.status == "succeeded" and len(receiver.deliveries) == 1


def test_localhost_name_refused_at_send(database: Database, receiver: Receiver) -> None:
    # /etc/hosts: localhost is 127.0.0.1 (and ::1); the name's addresses are judged.
    url = receiver.url.replace("127.0.0.1", "localhost")
    item = deliver(database, url, DENY_ALL_PRIVATE)
    assert item.status == "failed" and item.error.startswith(CODE) and "localhost" in item.error
    assert receiver.deliveries == []


class Rebinding:
    """getaddrinfo for one name: a public address first, loopback afterwards (the DNS
    rebinding attack); other names pass through. Counts the lookups of the name."""

    def __init__(self, name: str, real: Any, answers: list[str]) -> None:
        self.name, self.real, self.answers, self.calls = name, real, answers, 0

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != self.name:
            return self.real(host, port, *args, **kwargs)
        address = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0)))]


def test_rebinding_name_accepted_at_create_refused_at_send(
    database: Database, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebinding = Rebinding("hooks.rebind.test", socket.getaddrinfo, ["93.184.216.34", "127.0.0.1"])
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    service = ScheduleService(database, FakeClock(START), outbound=DENY_ALL_PRIVATE)
    url = receiver.url.replace("127.0.0.1", "hooks.rebind.test")
    service.register_job("acme", "s", JobSpec(name="h", target=f"webhook:{url}"), actor="t")
    assert rebinding.calls == 1  # judged at create: public then
    item = deliver(database, url, DENY_ALL_PRIVATE)
    assert item.status == "failed" and item.error.startswith(CODE)
    assert "hooks.rebind.test" in item.error and "127.0.0.1" in item.error
    assert receiver.deliveries == []


def test_connection_pinned_to_the_checked_address(
    database: Database, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The name resolves once per connection; the socket goes to that address, and the
    # Host header still names the host (a second lookup would answer 10.0.0.1 here).
    rebinding = Rebinding("pinned.test", socket.getaddrinfo, ["127.0.0.1", "10.0.0.1"])
    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = receiver.url.replace("127.0.0.1", "pinned.test")
    item = deliver(database, url, LOOPBACK)
    assert item.status == "succeeded", item.error
    assert rebinding.calls == 1
    assert receiver.deliveries[0].headers["Host"].startswith("pinned.test:")


def test_environment_proxy_is_ignored(
    database: Database, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    item = deliver(database, receiver.url, LOOPBACK)
    assert item.status == "succeeded" and len(receiver.deliveries) == 1
