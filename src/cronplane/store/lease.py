"""The leader lease: one row per dispatcher group, with a fencing term.

- **Acquire / renew** is a conditional UPDATE: it succeeds when we already
  hold the current term, or when the lease has expired (or was never held).
  A takeover increments `term`; a renewal keeps it. A follower reads the row
  first and stops there while another holder's lease is unexpired.
- **Fence**: every fire transaction runs :func:`fence` first, a read that
  matches only while our (holder, term) is current and unexpired. On
  PostgreSQL it also takes a shared lock on the lease row, so a concurrent
  takeover waits for our commit and then sees our writes; on SQLite the
  write transaction (BEGIN IMMEDIATE) already serializes everything. A
  deposed leader's fence matches nothing, and its whole transaction rolls
  back.
- **Cut-off**: a takeover of an expired lease first ends, on PostgreSQL, the
  server sessions still inside the old holder's fire transactions (they are
  tagged, see :func:`guard`). A holder frozen with its session *idle* is cut
  off by the server after half a TTL anyway; frozen in the middle of a COPY,
  its session stays *active* and no timeout ends it, so without the cut-off
  the takeover would wait behind its lock until it resumed.
- "now" is an argument: the dispatcher reads it from the database's clock on
  PostgreSQL (`DatabaseClock`), so node clock skew cannot decide who leads.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, or_, select, update
from sqlalchemy.exc import DBAPIError

from cronplane.store import dialects
from cronplane.store.tables import leases

log = logging.getLogger(__name__)


class Fenced(Exception):
    """Our term is no longer current: commit nothing (raised inside the transaction)."""


@dataclass(frozen=True, slots=True)
class LeaseState:
    """The lease row as read back."""

    name: str
    holder: str | None
    term: int
    expires_at: datetime | None


def ensure_row(conn: Connection, name: str) -> None:
    """Create the lease row if missing; safe when several nodes race (ON CONFLICT)."""
    values = {"name": name, "holder": None, "term": 0, "expires_at": None}
    conn.execute(dialects.of(conn).insert(leases).values(values).on_conflict_do_nothing())


def read(conn: Connection, name: str) -> LeaseState | None:
    """The lease row, or None when it does not exist yet."""
    row = conn.execute(
        select(leases.c.name, leases.c.holder, leases.c.term, leases.c.expires_at).where(
            leases.c.name == name
        )
    ).first()
    if row is None:
        return None
    return LeaseState(row.name, row.holder, row.term, row.expires_at)


def guard(conn: Connection, ttl: timedelta, *, firing: str | None = None) -> None:
    """Bound how long this transaction may sit idle on the server (PostgreSQL).

    Lease-holding transactions lock the lease row (see :func:`fence`). A
    client frozen inside one (SIGSTOP, a stalled VM) would hold that lock for
    ever and block every takeover; with this, the server ends its session
    after half a TTL of idleness, the lock goes, and a follower can take over
    within about one TTL. The frozen client's commit then fails: it writes
    nothing. `firing` (the group) also tags a fire transaction's session, so
    that a takeover can end it even when it is not idle (:func:`acquire`).
    SQLite has no server to end a frozen writer: there other writers time out
    (busy timeout) until it resumes or dies; standby nodes are PostgreSQL's job.
    """
    dialect = dialects.of(conn)
    if dialect.server_sessions:
        idle_ms = max(500, int(ttl.total_seconds() * 1000 / 2))
        dialect.bound_session(conn, idle_ms, None if firing is None else fire_tag(firing))


def fire_tag(group: str) -> str:
    """The application_name of a fire transaction's session (under PostgreSQL's 63 bytes)."""
    return "cronplane-fire:" + hashlib.sha256(group.encode()).hexdigest()[:24]


def cut_off(conn: Connection, group: str, wait: timedelta) -> int:
    """End the server sessions inside fire transactions of `group`; how many ended.

    Called only by a takeover of an expired lease: every such session
    belongs to a holder whose term is over, and must not commit. Waits (up to
    `wait`) until they are gone, so the takeover's UPDATE finds the lease row
    free. Without the right to signal them (another role), the takeover
    waits for their locks as before.
    """
    try:
        with conn.begin_nested():
            ended = dialects.of(conn).end_sessions(
                conn, fire_tag(group), int(wait.total_seconds() * 1000)
            )
    except DBAPIError as error:
        log.warning("could not end the old holder's fire sessions: %s", error)
        return 0
    if ended:
        log.warning("ended %d fire session(s) of the expired holder of %r", ended, group)
    return int(ended)


def acquire(
    conn: Connection,
    name: str,
    holder: str,
    *,
    known_term: int | None,
    now: datetime,
    ttl: timedelta,
) -> int | None:
    """Acquire or renew the lease; return our term, or None when another holds it.

    `known_term` is the term we believe we hold (None when we hold none): it is
    renewed in place when still ours; otherwise we may only take an expired
    lease, and that takeover starts a new term.
    """
    ensure_row(conn, name)
    if known_term is not None:
        renewal = conn.execute(
            update(leases)
            .where(leases.c.name == name, leases.c.holder == holder, leases.c.term == known_term)
            .values(expires_at=now + ttl, renewed_at=now)
            .returning(leases.c.term)
        ).first()
        if renewal is not None:
            return int(renewal.term)
    # A plain read first: a lease another node holds is the common case, and
    # then there is nothing to take (and no one to cut off).
    state = read(conn, name)
    if state is not None and state.expires_at is not None:
        if state.expires_at > now:
            return None
        if dialects.of(conn).server_sessions:
            cut_off(conn, name, ttl / 2)
    expired = or_(leases.c.expires_at.is_(None), leases.c.expires_at <= now)
    takeover = conn.execute(
        update(leases)
        .where(leases.c.name == name, expired)
        .values(
            holder=holder,
            term=leases.c.term + 1,
            expires_at=now + ttl,
            acquired_at=now,
            renewed_at=now,
        )
        .returning(leases.c.term)
    ).first()
    return int(takeover.term) if takeover is not None else None


def fence(conn: Connection, name: str, holder: str, term: int, now: datetime) -> None:
    """Inside a fire transaction: raise Fenced unless (holder, term) is current and unexpired.

    On PostgreSQL the read takes a shared lock on the lease row (FOR SHARE)
    until the transaction ends: a takeover's UPDATE waits for it and then
    sees our writes, while the leader's sibling fire transactions (lanes)
    share the lock instead of queueing behind one another. On SQLite the
    write transaction (BEGIN IMMEDIATE) already excludes every other writer.
    """
    current = conn.execute(
        select(leases.c.term)
        .where(
            leases.c.name == name,
            leases.c.holder == holder,
            leases.c.term == term,
            leases.c.expires_at > now,
        )
        .with_for_update(read=True)
    ).first()
    if current is None:
        raise Fenced(f"lease {name!r}: term {term} of {holder!r} is no longer current")


def release(conn: Connection, name: str, holder: str, term: int, now: datetime) -> bool:
    """Give the lease up (graceful stop) so a follower takes over at once."""
    result = conn.execute(
        update(leases)
        .where(leases.c.name == name, leases.c.holder == holder, leases.c.term == term)
        .values(expires_at=now, renewed_at=now)
    )
    return result.rowcount == 1


def hold_still(conn: Connection, name: str) -> None:
    """Inside a transaction that changes what the lease holder fires: wait out its fire.

    Locks the lease row FOR UPDATE (PostgreSQL): a fire transaction in
    flight holds it FOR SHARE, so this waits for its commit, and the next
    fire's fence waits for ours. On SQLite the write transaction already
    excludes every other writer. No row (no dispatcher yet): nothing to wait for.
    """
    conn.execute(select(leases.c.term).where(leases.c.name == name).with_for_update()).first()
