"""Outbound connections (webhook targets, alert channels): resolve once, check every
address against the platform's rule (core.outbound), connect to a checked address.

- **At create** (`check_at_create`): a literal address is judged at once; a name is
  resolved (at most CREATE_RESOLVE_SECONDS) and every address judged. A name that does
  not resolve then is accepted: DNS may not be reachable from the API's host, and the
  send-time check below refuses it anyway if it later resolves to a denied address.
- **At send** (`targets.outbound_http.http_client`, `PinnedSMTP`): every new connection resolves its host
  once, judges every address, and connects to those addresses, never to the name:
  no second lookup that a rebinding DNS server could answer differently. TLS still
  checks the certificate against the name (SNI), and the Host header is the name.
  Environment proxies are ignored (a proxy would connect where we did not check), and
  redirects are never followed (the 3xx is the answer).

`OutboundAddressDenied` (X403270OUTDNY) is the refusal on both paths.
"""

from __future__ import annotations

import contextlib
import smtplib
import socket
import threading
from collections.abc import Callable
from typing import Final

from cronplane.core.outbound import Address, OutboundPolicy, literal_address, normal_host

CREATE_RESOLVE_SECONDS: Final = 2.0

Resolver = Callable[[str, int], list[Address]]


def resolve(host: str, port: int) -> list[Address]:
    """Every address `host` names, in the resolver's order (one lookup); OSError when none."""
    literal = literal_address(host)
    if literal is not None:
        return [literal]
    found: list[Address] = []
    for _, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = literal_address(str(sockaddr[0]))
        if address is not None and address not in found:
            found.append(address)
    if not found:
        raise OSError(f"{host} resolves to no address")
    return found


def checked_addresses(
    policy: OutboundPolicy, host: str, port: int, resolver: Resolver = resolve
) -> list[Address]:
    """The host's addresses, every one allowed; OutboundAddressDenied otherwise."""
    addresses = resolver(normal_host(host), port)
    policy.check(host, addresses)
    return addresses


def check_at_create(policy: OutboundPolicy, host: str, port: int) -> None:
    """Refuse a host that is, or now resolves to, a denied address. A name that does not
    resolve within CREATE_RESOLVE_SECONDS is accepted (judged again at every send)."""
    literal = literal_address(host)
    if literal is not None:
        policy.check(host, [literal])
        return
    if normal_host(host) in policy.hosts:
        return
    found: list[list[Address]] = []

    def lookup() -> None:
        with contextlib.suppress(OSError, UnicodeError):
            found.append(resolve(normal_host(host), port))

    # getaddrinfo has no timeout of its own; a lookup that hangs must not hold the write.
    worker = threading.Thread(target=lookup, name="outbound-resolve", daemon=True)
    worker.start()
    worker.join(CREATE_RESOLVE_SECONDS)
    if found:
        policy.check(host, found[0])


class PinnedSMTP(smtplib.SMTP):
    """smtplib.SMTP connecting only to checked addresses of its host (STARTTLS still
    verifies the certificate against the host's name)."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        policy: OutboundPolicy,
        resolver: Resolver = resolve,
    ) -> None:
        self.policy = policy
        self.resolver = resolver
        super().__init__(host, port, timeout=timeout)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        addresses = checked_addresses(self.policy, host, port, self.resolver)
        failure: OSError | None = None
        for address in addresses:
            try:
                return socket.create_connection((str(address), port), timeout)
            except OSError as error:
                failure = error
        assert failure is not None
        raise failure


def uniform_failure(host: str, port: int, timeout: float) -> str:
    """The one text for a connection that failed, whatever failed: refused, reset and
    timed out read the same, so a viewer cannot map ports through a job's errors."""
    return (
        f"no answer from {host}:{port} within {timeout:g}s "
        "(could not connect, or the connection failed)"
    )
