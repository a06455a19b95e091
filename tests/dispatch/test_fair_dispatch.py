"""Fair dispatch: when a round cannot take every due row, batches are shared across tenants.

Tenant A's burst must not fill the batch that B's rows are due in. The
invariants: exactly once as before, and each batch gives each tenant its
max-min fair share (water filling) of the batch, within one row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.fire_rounds import FAIR_HEAD_ROWS
from cronplane.store import lease
from cronplane.store.database import Database
from cronplane.store.dispatch import Fairness, Fencing, fire_batch, reads
from cronplane.store.dispatch.fair import MAX_ROUNDS, Offer, Taken, fill, split
from cronplane.store.tables import metadata, queue_items
from firing_support import (
    START,
    add_job,
    add_schedules,
    check_exactly_once,
    occurrences,
    schedule_row,
)

TTL = timedelta(seconds=10)


def ideal(due: Mapping[str, int], limit: int) -> dict[str, Fraction]:
    """Max-min fair (water filling) shares of `limit` rows over the tenants' due counts."""
    left, shares = Fraction(limit), {}
    waiting = sorted(due, key=lambda t: due[t])
    while waiting:
        level = left / len(waiting)
        tenant = waiting[0]
        if due[tenant] <= level:
            shares[tenant] = Fraction(due[tenant])
            left -= due[tenant]
            waiting.pop(0)
        else:
            for t in waiting:
                shares[t] = level
            break
    return shares


# -- the pure parts ------------------------------------------------------------------


@given(
    st.integers(0, 10_000),
    st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.integers(0, 9), min_size=1),
)
def test_split_gives_each_its_weighted_share_within_one(
    total: int, weights: dict[str, int]
) -> None:
    shares = split(total, list(weights), weights)
    whole = sum(weights.values())
    if whole == 0:
        assert set(shares.values()) == {0}
        return
    assert sum(shares.values()) == total
    for tenant, weight in weights.items():
        assert abs(shares[tenant] - Fraction(total * weight, whole)) < 1


def simulated(due: dict[str, int]) -> tuple[Counter[str], object]:
    """A `take` over in-memory tenants: each has `due[t]` rows keyed 0, 1, …"""
    taken: Counter[str] = Counter()

    def take(offer: Offer) -> Taken:
        out: Taken = {}
        for tenant, (count, after) in offer.items():
            start = 0 if after is None else after + 1
            got = max(0, min(count, due[tenant] - start))
            if got:
                taken[tenant] += got
                out[tenant] = (got, start + got - 1)
        return out

    return taken, take


@given(
    st.dictionaries(st.sampled_from("ABCDEFGH"), st.integers(1, 400), min_size=1),
    st.integers(1, 600),
)
def test_fill_reaches_the_water_level(due: dict[str, int], limit: int) -> None:
    taken, take = simulated(due)
    got = fill(limit, sorted(due), take, Fairness())  # type: ignore[arg-type]
    assert got == sum(taken.values())
    # Each round but the last closes a tenant: with no more tenants than
    # rounds, the batch is full.
    assert got == min(limit, sum(due.values()))
    assert len(due) <= MAX_ROUNDS
    for tenant, share in ideal(due, limit).items():
        assert abs(taken[tenant] - share) < 1, (tenant, taken, ideal(due, limit))


def test_fill_honours_weights_and_caps() -> None:
    taken, take = simulated({"A": 1000, "B": 1000, "C": 1000})
    weights = {"A": 3, "B": 1}
    fill(500, ["A", "B", "C"], take, Fairness(weights=weights, caps={"B": 20, "C": 0}))  # type: ignore[arg-type]
    # C is capped at nothing, B at 20: A takes the rest.
    assert taken == {"A": 480, "B": 20}
    taken, take = simulated({"A": 1000, "B": 1000})
    fill(400, ["A", "B"], take, Fairness(weights=weights))  # type: ignore[arg-type]
    assert taken == {"A": 300, "B": 100}


# -- on both databases ---------------------------------------------------------------


def burst(database: Database, tenants: Mapping[str, int]) -> None:
    """`tenants[t]` rows of tenant t, all due at START."""
    for tenant, count in tenants.items():
        add_job(database, tenant=tenant)
        add_schedules(
            database,
            [schedule_row(f"s{n:05d}", tenant=tenant, next_run=START) for n in range(count)],
        )


def leader(database: Database) -> Fencing:
    with database.begin() as conn:
        term = lease.acquire(conn, "dispatcher", "test", known_term=None, now=START, ttl=TTL)
    assert term is not None
    return Fencing("dispatcher", "test", term)


def fired_by_tenant(database: Database) -> Counter[str]:
    with database.read() as conn:
        rows = conn.execute(
            select(queue_items.c.tenant, func.count()).group_by(queue_items.c.tenant)
        )
        return Counter({tenant: int(count) for tenant, count in rows})


def batches(database: Database, limit: int) -> Iterator[Counter[str]]:
    """Fair fire batches until nothing is due; each batch's fires by tenant."""
    fencing = leader(database)
    before = fired_by_tenant(database)
    while True:
        with database.begin() as conn:
            result = fire_batch(
                conn,
                fencing=fencing,
                now=START,
                limit=limit,
                occurrences=occurrences,
                fairness=Fairness(),
            )
        if not result.selected:
            return
        after = fired_by_tenant(database)
        yield after - before
        before = after


def test_a_small_tenant_is_in_the_first_batch_of_a_burst(database: Database) -> None:
    burst(database, {"tenant-a": 2000, "tenant-b": 10})
    first = next(batches(database, 500))
    assert first == {"tenant-a": 490, "tenant-b": 10}


def test_the_dispatcher_shares_only_rounds_that_cannot_take_every_row(
    database: Database,
) -> None:
    asked: list[datetime] = []

    def shares(now: datetime) -> Fairness:
        asked.append(now)
        return Fairness()

    burst(database, {"tenant-a": 2000, "tenant-b": 10})
    node = Dispatcher(
        database, FakeClock(START), holder="a", batch_size=500, occurrences=occurrences,
        fairness=shares,
    )  # fmt: skip
    report = node.tick()
    assert report.error is None and report.fired == 2010
    assert asked, "a burst larger than a round is shared"
    assert check_exactly_once(database)["occurrences"] == 2010
    # A round that takes every due row asks nothing: the plain range scan.
    asked.clear()
    clock = FakeClock(START + timedelta(minutes=1))
    node = Dispatcher(
        database, clock, holder="a", batch_size=5000, occurrences=occurrences, fairness=shares
    )
    # (skipped: the first items still wait, overlap `skip`)
    assert sum(batch.selected for batch in node.tick().batches) == 2010
    assert asked == []


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.dictionaries(st.sampled_from(["t1", "t2", "t3", "t4"]), st.integers(1, 120), min_size=1),
    st.integers(5, 150),
)
def test_every_batch_is_fair_and_every_occurrence_fires_once(
    database: Database, due: dict[str, int], limit: int
) -> None:
    with database.begin() as conn:  # each example starts empty
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())
    burst(database, due)
    left = dict(due)
    for batch in batches(database, limit):
        for tenant, share in ideal({t: n for t, n in left.items() if n}, limit).items():
            assert abs(batch[tenant] - share) < 1, (batch, left, limit)
        for tenant, count in batch.items():
            left[tenant] -= count
    assert not any(left.values())
    assert fired_by_tenant(database) == due
    assert check_exactly_once(database)["occurrences"] == sum(due.values())


@pytest.mark.postgres
def test_lanes_share_a_burst_without_firing_twice(pg_database: Database) -> None:
    burst(pg_database, {"tenant-a": 3000, "tenant-b": 10, "tenant-c": 40})
    node = Dispatcher(
        pg_database, FakeClock(START), holder="a", batch_size=500, lanes=2,
        occurrences=occurrences,
    )  # fmt: skip
    report = node.tick()
    assert report.error is None and report.fired == 3050
    assert check_exactly_once(pg_database)["occurrences"] == 3050


def test_a_shared_burst_starts_with_a_small_transaction(database: Database) -> None:
    # The small tenants' rows commit in the head round, not after a full batch.
    burst(database, {"tenant-a": 6000, "tenant-b": 10})
    node = Dispatcher(
        database, FakeClock(START), holder="a", batch_size=2000, occurrences=occurrences
    )
    report = node.tick()
    assert report.error is None and report.fired == 6010
    assert report.batches[0].selected == FAIR_HEAD_ROWS
    assert check_exactly_once(database)["occurrences"] == 6010


def test_a_tenants_rows_are_read_by_the_tenant_index(database: Database) -> None:
    """The fair round walks ix_schedule_state_tenant_due from the tenant's first due row,
    not ix_schedule_state_due past every other tenant's (no scan of all due rows)."""
    burst(database, {"tenant-a": 300, "tenant-b": 3})
    # Statistics as autovacuum keeps them: without any, PostgreSQL guesses the
    # tables tiny and may hash-join the round's rows to a scan of schedules.
    database.refresh_statistics("schedules", "schedule_state")
    with database.begin() as conn:
        if database.dialect == "sqlite":
            from cronplane.store.dispatch.sqlite import _PICK_TENANT

            params: Any = ("tenant-b", "9999", "", 0, 10)
            plan = " ".join(
                str(row[-1])
                for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {_PICK_TENANT}", params)
            )
            assert "USING INDEX ix_schedule_state_tenant_due (tenant=?" in plan, plan
        else:
            statement = str(reads._FAIR_ROUND.compile(dialect=conn.dialect))
            params = {"tenants": ["tenant-b"], "counts": [10], "now": START}
            plan = " ".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN {statement}", params))
            assert "Index Scan using ix_schedule_state_tenant_due" in plan, plan
            assert "Index Cond" in plan and "ROW(" in plan.split("ix_schedule_state_tenant_due")[1]
