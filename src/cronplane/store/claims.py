"""Claims: the statements that hand queued items to a worker, and a claim read ahead.

A claim is one UPDATE … RETURNING (module docstring of store.queue: never
one item to two workers). `claim_batch` chooses and takes in one statement.
`peek` + `claim_read` split it for an instant known in advance (a dispatcher
firing ahead wakes its in-process workers with the instant its items become
claimable): the rows are read and decoded before the instant, and the claim
at it only writes the ids still claimable, so the first start is not behind
a thousand rows' decoding (docs/performance.md, issue 32).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from operator import attrgetter
from typing import Any
from uuid import UUID

from sqlalchemy import (
    Connection,
    Integer,
    Text,
    bindparam,
    cast,
    false,
    func,
    or_,
    select,
    update,
)

from cronplane.core.model import QueueItem
from cronplane.store import dialects, item_rows
from cronplane.store.queue import _IDS, _NOW, _QUEUED, _WORKER
from cronplane.store.tables import queue_items
from cronplane.store.types import UTCDateTime

# Fair claims: a claim looks at the first CLAIM_WINDOW_FACTOR × its batch
# claimable items (in the claim index's order) and takes them in turns by
# tenant: each tenant's first item, then each one's second, …; within a turn,
# highest priority then oldest. A tenant's item among the first W = factor ×
# batch items is taken in the next claim as long as the other tenants in the
# window do not fill the batch in earlier turns; beyond W it waits until the
# window reaches it. The statement costs a claim ~25 % more on SQLite (the
# window function, whatever the window's size), so the worker claims in
# turns at its first claim and then every worker.FAIR_CLAIM_EVERY seconds,
# in index order between (docs/performance.md, "Fairness between tenants").
CLAIM_WINDOW_FACTOR = 16
_LIMIT = bindparam("limit", type_=Integer())
# The instant a claim made ahead of it takes the items claimable at (claim_read).
_AT = bindparam("at", type_=UTCDateTime())


def _claimable(at: Any) -> tuple[Any, ...]:
    """Queued items claimable at `at` (a bound instant) that are no limit's to claim."""
    return (
        _QUEUED,
        queue_items.c.available_at <= at,
        or_(queue_items.c.expires_at.is_(None), queue_items.c.expires_at > at),
        # Limited items (a job's max_concurrency, an exclusive schedule)
        # are store.limits' to claim, under its lock.
        queue_items.c.max_concurrency.is_(None),
        queue_items.c.exclusive.is_(false()),
    )


_CLAIMABLE = _claimable(_NOW)
_CLAIM_ORDER = (queue_items.c.priority.desc(), queue_items.c.available_at)
# What a claim writes: running under the worker's lease, one attempt more. started_at is
# when this attempt starts: a claimed item starts within the worker's start bound or is
# given back, and its outcome records the exact instant.
_CLAIMED: dict[str, Any] = {
    "status": "running",
    "attempts": queue_items.c.attempts + 1,
    "lease_owner": _WORKER,
    "heartbeat_at": _NOW,
    "lease_expires_at": bindparam("until", type_=UTCDateTime()),
    "started_at": _NOW,
    "updated_at": _NOW,
}


def _in_turns() -> Any:
    """The ids of the first `limit` items of the window, taken in turns by tenant."""
    window = (
        select(
            queue_items.c.id,
            queue_items.c.tenant,
            queue_items.c.priority,
            queue_items.c.available_at,
        )
        .where(*_CLAIMABLE)
        .order_by(*_CLAIM_ORDER)
        .limit(bindparam("window", type_=Integer()))
        .subquery("claim_window")
    )
    order = (window.c.priority.desc(), window.c.available_at, window.c.id)
    turn = func.row_number().over(partition_by=window.c.tenant, order_by=order)
    ranked = select(
        window.c.id, turn.label("turn"), window.c.priority, window.c.available_at
    ).subquery("claim_turns")
    return (
        select(ranked.c.id)
        .order_by(ranked.c.turn, ranked.c.priority.desc(), ranked.c.available_at, ranked.c.id)
        .limit(_LIMIT)
    )


def _candidates(fair: bool) -> Any:
    """The ids a claim takes: in turns by tenant over the window (`fair`), or the first
    `limit` in the claim index's order."""
    if fair:
        return select(queue_items.c.id).where(queue_items.c.id.in_(_in_turns()), *_CLAIMABLE)
    return select(queue_items.c.id).where(*_CLAIMABLE).order_by(*_CLAIM_ORDER).limit(_LIMIT)


def _taking(
    dialect: dialects.Dialect, candidates: Any, *returning: Any, values: dict[str, Any] = _CLAIMED
) -> Any:
    """UPDATE the `candidates` (a select of ids) that are still queued to claimed."""
    # MATERIALIZED: the candidates are chosen once. Inlined into the UPDATE,
    # PostgreSQL may rescan a locking LIMIT subquery and take more than `limit`.
    chosen = dialect.skip_locked(candidates).cte("candidates").prefix_with("MATERIALIZED")
    return (
        update(queue_items)
        # `status = 'queued'` again: the guard that makes the claim conditional.
        .add_cte(chosen)
        .where(dialect.among(queue_items.c.id, chosen), _QUEUED)
        .values(**values)
        .returning(*returning)
    )


@lru_cache(maxsize=8)
def _claim_statement(dialect: dialects.Dialect, fair: bool = True) -> Any:
    """UPDATE up to `limit` claimable items RETURNING them (`_candidates`), as the driver
    returns them (decoded by `item_rows`)."""
    return _taking(dialect, _candidates(fair), *item_rows.COLUMNS)


def claim_batch(
    conn: Connection,
    worker: str,
    now: datetime,
    lease: timedelta,
    limit: int,
    *,
    fair: bool = True,
) -> list[QueueItem]:
    """Take up to `limit` available unlimited items for `worker`, in turns by tenant.

    Of the window (CLAIM_WINDOW_FACTOR × limit items, highest priority then
    oldest), each tenant's first item, then each one's second, and so on;
    returned in that order (`in_turns`). Not `fair`: the first `limit` in
    the index's order (a cheaper statement; the worker claims in turns only
    every FAIR_CLAIM_EVERY seconds).

    Items under a limit (store.limits) are left to `limits.claim`.

    Each item is handed out once: on PostgreSQL the candidates are locked with
    SKIP LOCKED inside the one UPDATE; on SQLite the write transaction
    (BEGIN IMMEDIATE) serializes claims.
    """
    dialect = dialects.of(conn)
    params = {
        "worker": worker,
        "now": now,
        "until": now + lease,
        "limit": limit,
        "window": CLAIM_WINDOW_FACTOR * limit,
    }
    rows = list(conn.execute(_claim_statement(dialect, fair), params).all())
    if fair and len(rows) < limit and dialect.parallel_fires:
        # Another claim held some of the window's items (SKIP LOCKED): the
        # rest in the index's order, so concurrent workers still fill a batch.
        params["limit"] = limit - len(rows)
        rows += conn.execute(_claim_statement(dialect, fair=False), params).all()
    return _ordered(dialects.of(conn).decode_items(rows), fair)


def _ordered(found: list[QueueItem], fair: bool) -> list[QueueItem]:
    """Claimed items in the order they start: in turns by tenant, or the index's order."""
    if fair:
        return in_turns(found)
    found.sort(key=lambda item: (-item.priority, item.available_at, item.id))
    return found


def in_turns(items: Sequence[QueueItem]) -> list[QueueItem]:
    """Items in the order they start: turns by tenant, each turn highest priority then oldest."""
    seen: Counter[str] = Counter()
    turns = []
    for item in sorted(items, key=lambda item: (-item.priority, item.available_at, item.id)):
        seen[item.tenant] += 1
        turns.append((seen[item.tenant], -item.priority, item.available_at, item.id, item))
    return [turn[-1] for turn in sorted(turns, key=lambda turn: turn[:-1])]


@lru_cache(maxsize=4)
def _peek_statement(fair: bool) -> Any:
    """The rows a claim at `now` would take (read only; ordered by the caller)."""
    return select(*item_rows.COLUMNS).where(
        queue_items.c.id.in_(_candidates(fair).scalar_subquery())
    )


def peek(conn: Connection, at: datetime, limit: int, *, fair: bool = True) -> list[QueueItem]:
    """The unlimited items a claim at `at` would take, in the order it would start them;
    nothing is written (`claim_read` takes them at the instant)."""
    params = {"now": at, "limit": limit, "window": CLAIM_WINDOW_FACTOR * limit}
    found = dialects.of(conn).decode_items(conn.execute(_peek_statement(fair), params))
    return _ordered(found, fair)


@lru_cache(maxsize=8)
def _claim_read_statement(dialect: dialects.Dialect) -> Any:
    """UPDATE those of `ids` claimable at `at` (and not held by another claim) RETURNING
    ids, as text (read only when some were not taken)."""
    candidates = select(queue_items.c.id).where(queue_items.c.id.in_(_IDS), *_claimable(_AT))
    # Claimed ahead of `at`, an item starts no sooner: its start is `at` until it starts.
    values = _CLAIMED | {"started_at": _AT}
    return _taking(dialect, candidates, cast(queue_items.c.id, Text()), values=values)


def claim_read(
    conn: Connection,
    worker: str,
    now: datetime,
    lease: timedelta,
    items: Iterable[QueueItem],
    *,
    at: datetime | None = None,
) -> list[QueueItem]:
    """Claim items read ahead (`peek`) at `now`: those still claimable at `at` (default:
    now; later for a claim made ahead of the instant they become claimable) become
    `worker`'s, returned as the claim left them, in the order given; the rest were taken
    meanwhile, cancelled or expired."""
    items = list(items)
    if not items:
        return []
    params = {
        "ids": [i.id for i in items],
        "worker": worker,
        "now": now,
        "at": now if at is None else at,
        "until": now + lease,
    }
    rows = conn.execute(_claim_read_statement(dialects.of(conn)), params).scalars().all()
    if len(rows) < len(items):  # some were taken meanwhile: which ones (the ids' text)
        taken = {UUID(row) for row in rows}
        items = [item for item in items if item.id in taken]
    claimed = {
        "status": "running",
        "lease_owner": worker,
        "heartbeat_at": now,
        "lease_expires_at": params["until"],
        "started_at": params["at"],
        "updated_at": now,
    }
    return [_as_claimed(item, claimed) for item in items]


_FIELDS = attrgetter(*QueueItem.__slots__)
_ATTEMPTS = QueueItem.__slots__.index("attempts")


def _as_claimed(item: QueueItem, claimed: dict[str, Any]) -> QueueItem:
    """`item` as the claim wrote it (`_CLAIMED`). Field by position, not
    `dataclasses.replace`: that was 60 % of a 500-item claim's time."""
    values = list(_FIELDS(item))
    values[_ATTEMPTS] += 1
    for name, value in claimed.items():
        values[_POSITIONS[name]] = value
    return QueueItem(*values)


_POSITIONS = {name: QueueItem.__slots__.index(name) for name in _CLAIMED}
