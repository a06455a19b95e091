"""Fair claims: a claim takes its window's items in turns by tenant.

Tenant A's backlog queued first must not keep tenant B's later items from
starting: B's items are in the first claimed batch, and a claim still hands
each item out once.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from sqlalchemy import insert

from cronplane.store import claims, limits, queue
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from firing_support import START

LEASE = timedelta(minutes=5)


def backlog(database: Database, tenant: str, count: int, *, at: int, priority: int = 0) -> None:
    """`count` queued items of `tenant`, available `at` seconds after START."""
    now = START + timedelta(seconds=at)
    values = {"stack": "default", "environment": "default", "job": "job", "payload": {}}
    rows = [
        queue.item_values(tenant=tenant, source="api", now=now, priority=priority, **values)
        for _ in range(count)
    ]
    with database.begin() as conn:
        conn.execute(insert(queue_items), rows)


def test_a_later_tenant_is_in_the_first_claimed_batch(database: Database) -> None:
    backlog(database, "tenant-a", 2000, at=0)
    backlog(database, "tenant-b", 10, at=1)
    with database.begin() as conn:
        first = claims.claim_batch(conn, "w1", START + timedelta(seconds=2), LEASE, 128)
    tenants = Counter(item.tenant for item in first)
    assert tenants == {"tenant-a": 118, "tenant-b": 10}
    # They start in turns: B's first item is second, not 119th.
    assert [item.tenant for item in first[:4]] == ["tenant-a", "tenant-b"] * 2


def test_turns_keep_priority_within_a_tenant(database: Database) -> None:
    backlog(database, "tenant-a", 5, at=0)
    backlog(database, "tenant-a", 2, at=1, priority=9)
    # Later than A's plain items, so no turn holds two items equal in priority and
    # age (their ids, random within one instant, would order them).
    backlog(database, "tenant-b", 3, at=1)
    with database.begin() as conn:
        got = claims.claim_batch(conn, "w1", START + timedelta(seconds=2), LEASE, 6)
    assert [(i.tenant, i.priority) for i in got] == [
        ("tenant-a", 9), ("tenant-b", 0), ("tenant-a", 9), ("tenant-b", 0),
        ("tenant-a", 0), ("tenant-b", 0),
    ]  # fmt: skip


def test_claims_in_turns_hand_each_item_out_once(database: Database) -> None:
    backlog(database, "tenant-a", 300, at=0)
    backlog(database, "tenant-b", 40, at=1)
    backlog(database, "tenant-c", 7, at=2)
    now = START + timedelta(seconds=3)
    seen: list[object] = []
    for n in range(100):
        with database.begin() as conn:
            got = claims.claim_batch(conn, f"w{n % 3}", now, LEASE, 16)
        if not got:
            break
        seen += [item.id for item in got]
    assert len(seen) == len(set(seen)) == 347


def test_limited_claims_take_turns_too(database: Database) -> None:
    # Within its window (limits.SCAN_FACTOR × the batch, at least MIN_SCAN items).
    backlog(database, "tenant-a", 200, at=0)
    backlog(database, "tenant-b", 5, at=1)
    with database.begin() as conn:
        got = limits.claim(conn, "w1", START + timedelta(seconds=2), LEASE, 32, tenant_limit=100)
    assert Counter(item.tenant for item in got) == {"tenant-a": 27, "tenant-b": 5}


def test_a_claim_not_in_turns_takes_the_index_order(database: Database) -> None:
    # What a worker's claims between its claims in turns take (worker.FAIR_CLAIM_EVERY).
    backlog(database, "tenant-a", 300, at=0)
    backlog(database, "tenant-b", 10, at=1)
    with database.begin() as conn:
        got = limits.claim(conn, "w1", START + timedelta(seconds=2), LEASE, 128, fair=False)
    assert Counter(item.tenant for item in got) == {"tenant-a": 128}
