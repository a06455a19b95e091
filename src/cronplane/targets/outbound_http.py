"""The HTTP client of webhook targets and alert channels: httpx over connections
pinned to checked addresses (cronplane.outbound), no proxy, no redirects.

Kept apart from cronplane.outbound so that the service (which checks addresses at
create) does not import httpx.
"""

from __future__ import annotations

import typing

import httpcore
import httpx

from cronplane.core.outbound import OutboundPolicy
from cronplane.outbound import Resolver, checked_addresses, resolve


class PinnedBackend(httpcore.SyncBackend):
    """httpcore's socket backend, connecting only to checked addresses of the host."""

    def __init__(self, policy: OutboundPolicy, resolver: Resolver = resolve) -> None:
        self.policy = policy
        self.resolver = resolver

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Connect to the first checked address that answers (the name is never looked up
        again: httpcore's TLS layer still verifies the certificate against it)."""
        try:
            addresses = checked_addresses(self.policy, host, port, self.resolver)
        except (OSError, UnicodeError) as error:
            raise httpcore.ConnectError(f"{host} did not resolve") from error
        failure: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        assert failure is not None
        raise failure


class PinnedTransport(httpx.HTTPTransport):
    """An httpx transport over PinnedBackend: no proxy, no retries, TLS verified by name."""

    def __init__(self, policy: OutboundPolicy, resolver: Resolver = resolve) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=PinnedBackend(policy, resolver),
        )


def http_client(policy: OutboundPolicy, resolver: Resolver = resolve) -> httpx.Client:
    """A client for webhooks and channels: pinned connections, no redirects, no proxies."""
    return httpx.Client(
        transport=PinnedTransport(policy, resolver), follow_redirects=False, trust_env=False
    )
