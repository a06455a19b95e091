"""Which addresses webhooks and alert channels may connect to: one pure rule.

A public address (globally routable unicast) is allowed. Every other address is
denied unless CRONPLANE_OUTBOUND_ALLOW names it (a CIDR) or names the host it was
resolved from (a hostname):

| denied                                   | examples                              |
|------------------------------------------|---------------------------------------|
| unspecified                              | 0.0.0.0/8, ::                         |
| loopback                                 | 127.0.0.0/8, ::1                      |
| link-local (cloud metadata among them)   | 169.254.0.0/16 (169.254.169.254), fe80::/10 |
| private                                  | 10/8, 172.16/12, 192.168/16, fc00::/7 |
| shared (carrier-grade NAT)               | 100.64.0.0/10                         |
| multicast                                | 224.0.0.0/4, ff00::/8                 |
| reserved, and any other non-global range | 240.0.0.0/4, 255.255.255.255, fec0::/10, documentation, benchmarking, Teredo |

An IPv6 address that carries an IPv4 one is judged by the IPv4 one: IPv4-mapped
(::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
(2002::/16). A literal host is read the way the OS resolver reads it
(`inet_aton`: `0x7f.1`, `2130706433` and `017700000001` are all 127.0.0.1), so no
spelling slips past.

The checks that use this rule (at create, and on every connection at send) are
in `cronplane.outbound`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from cronplane.errors import InvalidRequest, OutboundAddressDenied

ALLOW_VARIABLE: Final = "CRONPLANE_OUTBOUND_ALLOW"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# The first match names the refusal; what none of them covers is still denied when it
# is not global (ipaddress's IANA special-purpose tables).
DENIED: Final[tuple[tuple[Network, str], ...]] = tuple(
    (ipaddress.ip_network(cidr), what)
    for cidr, what in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fc00::/7", "private"),
        ("fec0::/10", "reserved"),
        ("ff00::/8", "multicast"),
    )
)
MAPPED: Final = ipaddress.IPv6Network("::ffff:0:0/96")
COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")


def embedded_ipv4(address: Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 one carries, and how; None when it carries none."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    value = int(address)
    if address in MAPPED:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF), "IPv4-mapped"
    if address in COMPATIBLE:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF), "IPv4-compatible"
    if address in NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF), "NAT64"
    if address in SIX_TO_FOUR:
        return ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF), "6to4"
    return None


def literal_address(host: str) -> Address | None:
    """The address a host names when it is a literal (brackets and an IPv6 zone allowed;
    IPv4 in any spelling `inet_aton` accepts); None for a name to resolve."""
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.ip_address(name.partition("%")[0] if ":" in name else name)
    except ValueError:
        pass
    if not name or not name.isascii():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except OSError:
        return None


def normal_host(host: str) -> str:
    """A host name as the allowlist compares it: lower case, no trailing dot, no brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


@dataclass(frozen=True, slots=True)
class OutboundPolicy:
    """What CRONPLANE_OUTBOUND_ALLOW adds to the public addresses: networks and host names."""

    networks: tuple[Network, ...] = ()
    hosts: frozenset[str] = frozenset()

    def allows_network(self, address: Address) -> bool:
        """Whether an allowed CIDR covers the address."""
        return any(address.version == net.version and address in net for net in self.networks)

    def reason(self, address: Address) -> str | None:
        """Why the address is denied (e.g. "loopback"); None when it is allowed."""
        if self.allows_network(address):
            return None
        for network, what in DENIED:
            if address.version == network.version and address in network:
                return what
        carried = embedded_ipv4(address)
        if carried is not None:
            inner, how = carried
            why = self.reason(inner)
            return None if why is None else f"{why} ({how} {inner})"
        if not address.is_global:
            return "not a public address"
        return None

    def check(self, host: str, addresses: Iterable[Address]) -> None:
        """OutboundAddressDenied naming the host, the first denied address and the setting;
        every address must pass (a name that resolves to one denied address is refused)."""
        if normal_host(host) in self.hosts:
            return
        for address in addresses:
            why = self.reason(address)
            if why is not None:
                raise OutboundAddressDenied(
                    f"outbound connection to {host} refused: it resolves to {address}, "
                    f"a {why} address; allow it with {ALLOW_VARIABLE}",
                    {"host": host, "address": str(address), "setting": ALLOW_VARIABLE},
                )


DENY_ALL_PRIVATE: Final = OutboundPolicy()


def parse_allow(text: str | None) -> OutboundPolicy:
    """CRONPLANE_OUTBOUND_ALLOW: comma-separated CIDRs (or single addresses) and host
    names; empty or unset: public addresses only. InvalidRequest names a bad entry."""
    networks: list[Network] = []
    hosts: set[str] = set()
    for raw in (text or "").split(","):
        entry = raw.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        name = normal_host(entry)
        if not _is_host_name(name):
            raise InvalidRequest(
                f"{ALLOW_VARIABLE}: {entry[:80]!r} is neither a CIDR nor a host name",
                {"field": ALLOW_VARIABLE},
            )
        hosts.add(name)
    return OutboundPolicy(tuple(networks), frozenset(hosts))


def _is_host_name(name: str) -> bool:
    labels = name.split(".")
    return (
        0 < len(name) <= 253
        and name.isascii()
        and all(
            0 < len(label) <= 63
            and label.replace("-", "").replace("_", "").isalnum()
            and not label.startswith("-")
            for label in labels
        )
    )


def url_host_port(url: str) -> tuple[str, int]:
    """The host and port an http(s) URL connects to (ValueError when it names none)."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise ValueError("the URL names no host")
    port = parts.port  # ValueError for a port out of range
    if port is None:
        port = 443 if parts.scheme.lower() == "https" else 80
    return host, port
