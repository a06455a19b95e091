"""Shards of tenants: what a shard is, and how many of them a node should lead.

A shard is a name and a database URL. Every tenant lives on exactly one
shard (its schedules, state, jobs, versions, calendars and alert rules, in
that shard's database), recorded in the control database's tenant map; a
tenant the map does not name lives on the default shard, which is the
control database itself, so a one-database install is one shard and needs
no setting.

Each shard has its own dispatcher lease (in its own database). A node aims
to lead its share, ``ceil(shards / live nodes)``: it gives back leases over
that share at renewal, and takes free or expired ones while under it, so
leadership spreads when nodes join and is taken over when one dies
(docs/operations.md, "Sharded dispatch").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from cronplane.core.validation import validate_name
from cronplane.errors import InvalidName, InvalidShard

DEFAULT_SHARD: Final = "default"
# A lease left expired this long is taken by any node, whatever its share: when
# the nodes' counts of live nodes disagree for a moment, no shard goes unled.
ORPHAN_TTLS: Final = 2

_ENTRY = re.compile(r"(?P<name>[^=\s]+)=(?P<url>\S+)")


@dataclass(frozen=True, slots=True)
class Shard:
    """A shard: a name and the database its tenants live in."""

    name: str
    url: str
    # A draining shard takes no tenant; `shard drain` moves its tenants away.
    draining: bool = False


def shard_name(value: object) -> str:
    """A shard's name: the rules of every other name (lowercase, digits, `-`, `_`)."""
    try:
        return validate_name(value, "shard")
    except InvalidName as error:  # the name rules' own message, under the shard's code
        raise InvalidShard(f"shard name {value!r} is not valid: {error}") from error


def parse_shards(text: str) -> list[Shard]:
    """CRONPLANE_SHARDS: `name=url` entries separated by whitespace (or newlines).

    URLs may hold commas and semicolons (query strings), never whitespace,
    hence the separator. The default shard is the control database: it may
    not be named again.
    """
    shards: list[Shard] = []
    for token in text.split():
        match = _ENTRY.fullmatch(token)
        if match is None:
            raise InvalidShard(
                f"CRONPLANE_SHARDS entry {token.split('=')[0][:40]!r} is not name=url",
                {"field": "CRONPLANE_SHARDS"},
            )
        name = shard_name(match["name"])
        if name == DEFAULT_SHARD:
            raise InvalidShard(
                f"{DEFAULT_SHARD!r} is the control database's own shard: name another",
                {"field": "CRONPLANE_SHARDS"},
            )
        if any(shard.name == name for shard in shards):
            raise InvalidShard(f"shard {name!r} is named twice", {"field": "CRONPLANE_SHARDS"})
        shards.append(Shard(name, match["url"]))
    return shards


@dataclass(frozen=True, slots=True)
class Share:
    """How many shards one node should lead: between `floor` and `ceiling`.

    `starved`: a live node leads fewer than `floor` (a node over the floor
    then gives one back, for it to take).
    """

    floor: int
    ceiling: int
    starved: bool = False


def fair_share(shards: int, leads: Iterable[int]) -> Share:
    """The share of each of the live nodes, given how many shards each leads now."""
    counts = list(leads)
    live = max(1, len(counts))
    floor = shards // live
    return Share(floor, max(1, math.ceil(shards / live)), any(n < floor for n in counts))


def to_give_back(held: Iterable[str], share: Share) -> list[str]:
    """Which of the shards a node leads it gives back: those over the ceiling, or one
    over the floor while a node starves.

    The last by name: every node ranks the same way, so two nodes over their
    share do not both give back the shard the other would keep.
    """
    ranked = sorted(held)
    keep = min(len(ranked), share.ceiling)
    if share.starved and keep > share.floor:
        keep -= 1
    return ranked[keep:]


def may_take(held: int, share: Share, expired_for: timedelta | None, ttl: timedelta) -> bool:
    """Whether a node leading `held` shards may take one more, free, lease.

    Under the floor, or a lease never held (`None`: a new shard is led at
    once and rebalanced at renewal): yes. Under the ceiling: once the lease
    has been free for two thirds of a TTL, so that a node under the floor,
    which looks every third, takes it first. Otherwise only a lease expired
    for ORPHAN_TTLS TTLs (no node took it): a shard is never left unled
    because the nodes' views of who is live differ.
    """
    if held < share.floor or expired_for is None:
        return True
    if held < share.ceiling:
        return expired_for >= ttl * 2 / 3
    return expired_for >= ttl * ORPHAN_TTLS
