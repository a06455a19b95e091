"""One lease step of a dispatcher: acquire, renew, or (sharing shards) give back.

The lease rules are store.lease's. A dispatcher of one shard among several
also has a :class:`Seat`: the node's view of how many shards it should lead
(core.shards), asked before it takes a lease and after it renews one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.codes import Code
from cronplane.service.housekeeping import SYSTEM_TENANT
from cronplane.store import lease
from cronplane.store.events import append_event

log = logging.getLogger(__name__)


class Seat(Protocol):
    """Whether this node may lead one more shard, or should give one back."""

    def may_take(self, expired_for: timedelta | None) -> bool:
        """Before taking a lease that is free (expired `expired_for` ago; None: never held)."""
        ...

    def must_yield(self) -> bool:
        """After renewing: whether this node leads more than its share and this is one to give."""
        ...


@dataclass(frozen=True, slots=True)
class Step:
    """What a lease step decided: our term (None: we follow) and how long a follower sleeps."""

    term: int | None
    follower_sleep: float


def lease_step(
    conn: Connection,
    *,
    group: str,
    holder: str,
    known_term: int | None,
    now: datetime,
    ttl: timedelta,
    seat: Seat | None,
) -> Step:
    """Acquire or renew `group`'s lease (or give it back) inside the caller's transaction."""
    third = ttl.total_seconds() / 3
    if known_term is not None and seat is not None and seat.must_yield():
        if lease.release(conn, group, holder, known_term, now):
            _record(conn, ev.LEADER_RELEASED, group, holder, known_term, now, "gave back")
            log.info("dispatcher %s gave %r back (term %d)", holder, group, known_term)
        return Step(None, third)
    if known_term is None and seat is not None:
        state = lease.read(conn, group)
        expires = None if state is None else state.expires_at
        if expires is not None and expires > now:
            return Step(None, _until(expires, now, third))
        if not seat.may_take(None if expires is None else now - expires):
            return Step(None, third)
    term = lease.acquire(conn, group, holder, known_term=known_term, now=now, ttl=ttl)
    if term is not None and term != known_term:
        _record(conn, ev.LEADER_ACQUIRED, group, holder, term, now, "leads")
    if term is not None:
        return Step(term, 0.0)
    state = lease.read(conn, group)
    if state is None or state.expires_at is None:
        return Step(None, 0.0)
    return Step(None, _until(state.expires_at, now, third))


def _until(expires: datetime, now: datetime, third: float) -> float:
    """A follower checks again just after the lease could expire, and at least every
    third of the TTL: takeover within one TTL of the leader's last renewal."""
    return min(third, max(0.01, (expires - now).total_seconds() + 0.01))


def _record(
    conn: Connection, code: Code, group: str, holder: str, term: int, now: datetime, verb: str
) -> None:
    append_event(
        conn,
        code,
        tenant=SYSTEM_TENANT,
        actor=holder,
        message=f"{holder} {verb} {group!r}, term {term}",
        now=now,
        detail={"group": group, "term": term, "holder": holder},
    )
