"""Fair fill: a fire batch shared across tenants instead of taken in next_run order.

Used only when a round cannot take every due row (the dispatcher counts them,
capped, before the round): otherwise the batch is the plain range scan of
ix_schedule_state_due and this module costs nothing.

How a batch of `limit` rows is filled (max-min fair, "water filling"):

1. The tenants with due rows, by a skip scan of ix_schedule_state_tenant_due
   (tenant, next_run) WHERE enabled: one `min(tenant) … tenant > t` probe
   per tenant with enabled schedules, then one probe for that tenant's
   earliest next_run. O(tenants) index probes; no due row is read.
2. Rounds. Each open tenant is offered a share of what is left (`split`:
   equal, or in proportion to a weight), at most its cap; one statement takes
   up to that many of each tenant's earliest due rows after what it already
   took (SQLite: the keyset (next_run, rowid); PostgreSQL: all it took plus
   the offer, dropping the rows it holds; SKIP LOCKED there). A
   tenant that returns fewer than offered has nothing more due (or another
   lane holds it) and closes. A round in which no tenant closes fills the
   batch, so rounds ≤ 1 + tenants that close, capped at MAX_ROUNDS (a batch
   may then come back short; the dispatcher's next tick, at once, takes the
   rest).

Rows read: those taken, plus the probes (and on PostgreSQL, in a later round,
a tenant's rows of the earlier rounds again). Each tenant ends with
min(its due rows, the water level), within 1 of the ideal share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# A batch is filled in at most this many statements after the skip scan.
MAX_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class Fairness:
    """How a batch is shared: per-tenant weights (default 1) and caps (rows per batch).

    A cap is how a tenant's allowance (say, a quota of fires per minute) limits
    its share; a tenant capped at 0 gets nothing in this batch.
    """

    weights: Mapping[str, int] | None = None
    caps: Mapping[str, int] | None = None


def split(total: int, tenants: Sequence[str], weights: Mapping[str, int] | None) -> dict[str, int]:
    """`total` rows shared over `tenants` in proportion to their weights (default 1).

    Largest remainder: each tenant gets floor or ceil of its exact share; the
    extra rows go to the largest remainders, ties to the earlier tenant (the
    callers list tenants earliest due first).
    """
    weight = {t: max(0, (weights or {}).get(t, 1)) for t in tenants}
    whole = sum(weight.values())
    if total <= 0 or whole == 0:
        return dict.fromkeys(tenants, 0)
    shares = {t: total * weight[t] // whole for t in tenants}
    left = total - sum(shares.values())
    by_remainder = sorted(
        (t for t in tenants if weight[t]),
        key=lambda t: -(total * weight[t] % whole),
    )
    for tenant in by_remainder[:left]:
        shares[tenant] += 1
    return shares


# What a round's statement is given: per tenant, how many rows and the keyset
# (next_run, id) after which to take them (None: from the first).
Offer = dict[str, tuple[int, Any]]
# What it returns: per tenant, how many it took and the last key taken.
Taken = dict[str, tuple[int, Any]]


def fill(
    limit: int,
    tenants: Sequence[str],
    take: Callable[[Offer], Taken],
    fairness: Fairness,
) -> int:
    """Run the rounds (module docstring) through `take`; the rows taken in all."""
    caps = dict(fairness.caps or {})
    after: dict[str, Any] = dict.fromkeys(tenants)
    got: dict[str, int] = dict.fromkeys(tenants, 0)
    open_ = [t for t in tenants if caps.get(t, limit) > 0]
    left = limit
    for _round in range(MAX_ROUNDS):
        if left <= 0 or not open_:
            break
        offer = {
            t: (min(n, caps.get(t, limit)), after[t])
            for t, n in _topping(left, open_, got, fairness.weights).items()
        }
        offer = {t: o for t, o in offer.items() if o[0] > 0}
        if not offer:
            break
        taken = take(offer)
        closed = set()
        for tenant, (wanted, _after) in offer.items():
            count, last = taken.get(tenant, (0, None))
            left -= count
            got[tenant] += count
            if tenant in caps:
                caps[tenant] -= count
            if count:
                after[tenant] = last
            if count < wanted or caps.get(tenant, limit) <= 0:
                closed.add(tenant)
        open_ = [t for t in open_ if t not in closed]
    return limit - left


def _topping(
    left: int, tenants: Sequence[str], got: Mapping[str, int], weights: Mapping[str, int] | None
) -> dict[str, int]:
    """This round's offers: what brings each open tenant to its share of all they hold.

    The open tenants' shares are split from what they took so far plus what is
    left, so a tenant rounded up in one round is not rounded up again in the
    next. A tenant already past its new share (by a rounding) is offered
    nothing, and the offers are trimmed, those furthest ahead first, to `left`.
    """
    whole = left + sum(got[t] for t in tenants)
    target = split(whole, tenants, weights)
    offers = {t: max(0, target[t] - got[t]) for t in tenants}
    weight = {t: max(1, (weights or {}).get(t, 1)) for t in tenants}
    while sum(offers.values()) > left:
        ahead = max(
            (t for t in tenants if offers[t]), key=lambda t: (got[t] + offers[t]) / weight[t]
        )
        offers[ahead] -= 1
    return offers
