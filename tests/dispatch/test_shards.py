"""Shards: leadership spread over nodes, taken over from a dead one, and tenants moved
between shard databases without a double or a lost fire.

Every test runs on SQLite files and on PostgreSQL databases (one per shard),
with time injected: the nodes tick in turn on one FakeClock.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import worker_handlers
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.shards import Shard
from cronplane.processes.node import NodeOptions
from cronplane.processes.shard_node import ShardNode
from cronplane.processes.worker import Worker
from cronplane.service.shards import DISPATCH_GROUP, ShardService
from cronplane.store import lease, shard_map, tenant_moves
from cronplane.store.database import Database
from cronplane.store.shard_databases import ShardDatabases
from cronplane.store.tables import events, leases, metadata, queue_items
from cronplane.store.tables import tenant_moves as tenant_moves_table
from firing_support import START, TENANT, add_job, add_schedule
from table_support import empty_tables

TTL = 6.0
OPTIONS = NodeOptions(workers=0, ttl=TTL, alerts=False, fire_ahead=0.0)


def node(
    databases: ShardDatabases, clock: FakeClock, holder: str, options: NodeOptions = OPTIONS
) -> ShardNode:
    return ShardNode(databases, options, clock, holder=holder)


def rounds(nodes: list[ShardNode], clock: FakeClock, count: int) -> None:
    """Every node ticks, then a third of the TTL passes (a renewal each round)."""
    for _ in range(count):
        for each in nodes:
            each.tick()
        clock.advance(TTL / 3)


def leaders(databases: ShardDatabases, now: datetime) -> dict[str, str | None]:
    """Each shard's current lease holder's node (None: no live lease)."""
    found: dict[str, str | None] = {}
    for shard in databases.shards():
        with databases.database(shard.name).read() as conn:
            row = conn.execute(select(leases).where(leases.c.name == DISPATCH_GROUP)).first()
        live = row is not None and row.expires_at is not None and row.expires_at > now
        found[shard.name] = row.holder.split("/")[0] if live and row.holder else None
    return found


def test_leadership_spreads_over_the_live_nodes(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    first = node(databases, clock, "n1")
    rounds([first], clock, 2)
    assert set(leaders(databases, clock.now()).values()) == {"n1"}  # alone: it leads all 4
    nodes = [first, node(databases, clock, "n2"), node(databases, clock, "n3")]
    rounds(nodes, clock, 6)
    led = leaders(databases, clock.now())
    assert None not in led.values(), led
    per_node = Counter(led.values())
    assert sorted(per_node.values()) == [1, 1, 2], led  # ceil(4 / 3) = 2 at most
    # The giving back is in the ledger of the shards given.
    given = 0
    for shard in databases.shards():
        with databases.database(shard.name).read() as conn:
            given += len(
                conn.execute(
                    select(events.c.id).where(events.c.code == ev.LEADER_RELEASED.text)
                ).all()
            )
    assert given >= 2


def test_a_dead_nodes_shards_are_taken_over_within_the_ttl(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    nodes = [node(databases, clock, f"n{n}") for n in (1, 2, 3)]
    rounds(nodes, clock, 6)
    before = leaders(databases, clock.now())
    dead = next(name for name, count in Counter(before.values()).items() if count == 2)
    survivors = [each for each in nodes if each.holder != dead]
    # The dead node neither renews, nor releases, nor leaves the node list.
    rounds(survivors, clock, 3 * 3)
    after = leaders(databases, clock.now())
    assert None not in after.values() and dead not in after.values(), after
    assert sorted(Counter(after.values()).values()) == [2, 2]
    for shard, holder in before.items():
        if holder != dead:
            assert after[shard] == holder  # a live node's shards stay where they were


def test_a_stopping_node_hands_its_shards_over(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    nodes = [node(databases, clock, f"n{n}") for n in (1, 2)]
    rounds(nodes, clock, 6)
    assert sorted(Counter(leaders(databases, clock.now()).values()).values()) == [2, 2]
    nodes[1].stop()  # releases its leases and leaves the node list
    rounds(nodes[:1], clock, 2)
    assert set(leaders(databases, clock.now()).values()) == {"n1"}


def _acme(databases: ShardDatabases, count: int = 3) -> list[Any]:
    control = databases.control
    add_job(control)
    # No worker runs the items: `allow`, so each occurrence is queued, not skipped as overlap.
    return [
        add_schedule(control, f"every-minute-{n}", next_run=START, overlap="allow")
        for n in range(count)
    ]


def fired_everywhere(databases: ShardDatabases, tenant: str = TENANT) -> dict[Any, list[Any]]:
    """Every fired event of `tenant` in every shard's ledger, by schedule, in order;
    checks each item is unique across shards and has its event beside it."""
    by_schedule: defaultdict[Any, list[Any]] = defaultdict(list)
    seen: Counter[tuple[Any, datetime]] = Counter()
    for shard in databases.shards():
        database = databases.database(shard.name)
        with database.read() as conn:
            fired = conn.execute(
                select(events).where(
                    events.c.code == ev.SCHEDULE_FIRED.text, events.c.tenant == tenant
                )
            ).all()
            queued = conn.execute(
                select(
                    queue_items.c.id, queue_items.c.schedule_id, queue_items.c.scheduled_for
                ).where(queue_items.c.tenant == tenant)
            ).all()
        assert {e.item_id for e in fired} == {q.id for q in queued}, shard.name
        for item in queued:
            seen[(item.schedule_id, item.scheduled_for)] += 1
        for event in fired:
            by_schedule[event.schedule_id].append(event)
    twice = [key for key, count in seen.items() if count > 1]
    assert twice == [], f"occurrences queued twice: {twice[:3]}"
    for fired_list in by_schedule.values():
        fired_list.sort(key=lambda e: e.scheduled_for)
    return by_schedule


def assert_every_minute_once(by_schedule: dict[Any, list[Any]], until: datetime) -> None:
    """Each schedule's ledger covers every minute from START to `until`, each once."""
    assert by_schedule
    for fired in by_schedule.values():
        expected = START
        for event in fired:
            assert datetime.fromisoformat(event.detail["first_due"]) == expected
            minutes = int((event.scheduled_for - expected).total_seconds() // 60) + 1
            assert event.detail["coalesced"] == minutes
            expected = event.scheduled_for + timedelta(minutes=1)
        assert expected > until - timedelta(minutes=1), f"nothing fired after {expected}"


def test_a_moved_tenant_fires_every_occurrence_once(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    shards = ShardService(databases, clock)
    _acme(databases)
    # Ticks 20 and 40 s apart: a TTL over both, so the two nodes stay live and share.
    slow = NodeOptions(workers=0, ttl=90, alerts=False, fire_ahead=0.0)
    nodes = [node(databases, clock, "n1", slow), node(databases, clock, "n2", slow)]
    for minute in range(12):
        if minute == 3:
            report = shards.move(TENANT, "s2", actor="ops")
            assert report.moved and report.came_from == "default" and report.epoch == 1
            assert report.rows["schedules"] == 3 and report.rows["jobs"] == 1
        if minute == 7:
            assert shards.move(TENANT, "s3", actor="ops").epoch == 2
        for each in nodes:
            each.tick()
        clock.advance(20)
        for each in nodes:
            each.tick()
        clock.advance(40)
    by_schedule = fired_everywhere(databases)
    assert_every_minute_once(by_schedule, clock.now())
    # The tenant now lives on s3 only; its rows left the shards it passed through.
    with databases.control.read() as conn:
        assert shard_map.place_of(conn, TENANT).shard == "s3"
    for shard in ("default", "s2"):
        with databases.database(shard).read() as conn:
            assert tenant_moves.read_rows(conn, TENANT)["schedules"] == []
    with databases.database("s3").read() as conn:
        assert len(tenant_moves.read_rows(conn, TENANT)["schedules"]) == 3


def test_an_interrupted_move_resumes_without_a_double_fire(databases: ShardDatabases) -> None:
    clock = FakeClock(START)
    shards = ShardService(databases, clock)
    _acme(databases)
    worker = node(databases, clock, "n1", NodeOptions(workers=0, ttl=90, alerts=False))
    worker.tick()
    clock.advance(60)
    # The move stops after its rows landed on s1 (a crash before the map names s1).
    with databases.control.begin() as conn:
        shard_map.begin_move(conn, TENANT, "s1", clock.now())
    with databases.control.begin() as conn:
        rows = tenant_moves.leave(
            conn, TENANT, epoch=1, to="s1", group=DISPATCH_GROUP, now=clock.now()
        )
    with databases.database("s1").begin() as conn:
        assert tenant_moves.land(conn, TENANT, rows, epoch=1, came_from="default", now=clock.now())
    for _ in range(3):  # s1's leader fires the landed rows meanwhile
        worker.tick()
        clock.advance(60)
    with pytest.raises(Exception, match="already moving"):
        shards.move(TENANT, "s2", actor="ops")
    report = shards.move(TENANT, "s1", actor="ops")  # run again: resumes, lands nothing twice
    assert report.moved and report.epoch == 1
    for _ in range(3):
        worker.tick()
        clock.advance(60)
    assert_every_minute_once(fired_everywhere(databases), clock.now())
    with databases.database("s1").read() as conn:
        assert len(tenant_moves.read_rows(conn, TENANT)["schedules"]) == 3


@pytest.fixture
def pg_pair(pg_shard_urls: list[str]) -> Iterator[ShardDatabases]:
    """Two emptied PostgreSQL databases: the control one and shard s1's."""
    control = Database(pg_shard_urls[0])
    empty_tables(control)
    databases = ShardDatabases(control)
    with control.begin() as conn:
        shard_map.register(conn, Shard("s1", pg_shard_urls[1]), START)
    empty_tables(databases.database("s1"))
    yield databases
    databases.dispose()
    control.dispose()


@pytest.mark.postgres
def test_a_move_waits_for_the_fire_in_flight(pg_pair: ShardDatabases) -> None:
    """On PostgreSQL the old shard's rows leave only after a fire holding the lease row
    commits (on SQLite, its one writer serializes the two)."""
    databases, control = pg_pair, pg_pair.control
    clock = FakeClock(START)
    _acme(databases, 1)
    with control.begin() as conn:
        ttl = timedelta(minutes=1)
        lease.acquire(conn, DISPATCH_GROUP, "fire", known_term=None, now=START, ttl=ttl)
    done = threading.Event()

    def move() -> None:
        ShardService(databases, clock).move(TENANT, "s1", actor="ops")
        done.set()

    with control.engine.connect() as in_flight:
        with in_flight.begin():
            lease.fence(in_flight, DISPATCH_GROUP, "fire", 1, START)  # FOR SHARE, as a fire
            moving = threading.Thread(target=move)
            moving.start()
            assert not done.wait(1.0), "the move did not wait for the fire in flight"
        assert done.wait(20), "the move did not go on once the fire committed"
    moving.join()


def test_every_table_with_a_tenant_moves_or_is_kept_on_purpose() -> None:
    with_tenant = {table.name for table in metadata.sorted_tables if "tenant" in table.c}
    moved = {table.name for table in tenant_moves.moved_tables()}
    assert moved | tenant_moves.KEPT >= with_tenant
    assert {
        "schedules",
        "schedule_state",
        "schedule_labels",
        "jobs",
        "schedule_versions",
        "job_versions",
        "alert_rules",
        "alert_channels",
        "calendars",
        "tenant_quotas",
    } <= moved
    assert moved.isdisjoint({"events", "queue_items", "api_tokens"})


def test_the_leader_gauges_count_every_shard_a_node_leads() -> None:
    from cronplane.api import metrics

    def value(name: str) -> float | None:
        return metrics.REGISTRY.get_sample_value(name)

    try:
        metrics.set_leader(True, 7, "default")
        metrics.set_leader(True, 3, "s1")
        assert (value("cronplane_leader"), value("cronplane_shards_led")) == (1.0, 2.0)
        assert value("cronplane_leader_term") == 7.0  # the default shard's term
        metrics.set_leader(False, None, "default")
        assert (value("cronplane_leader"), value("cronplane_shards_led")) == (1.0, 1.0)
        metrics.set_leader(False, None, "s1")
        assert (value("cronplane_leader"), value("cronplane_shards_led")) == (0.0, 0.0)
    finally:
        metrics.set_leader(False, None, "default")
        metrics.set_leader(False, None, "s1")


def _service(database: Database, clock: FakeClock) -> Any:
    from cronplane.service import ScheduleService

    return ScheduleService(database, clock)


def test_a_stale_writer_cannot_leave_a_row_behind_on_the_shard_a_tenant_left(
    databases: ShardDatabases,
) -> None:
    """A writer that read the map before the move writes to the old shard: refused, coded."""
    from cronplane.core.inputs import JobSpec, ScheduleSpec
    from cronplane.core.model import Scope
    from cronplane.errors import TenantMoving
    from cronplane.store.schedules import insert_rows
    from firing_support import schedule_row

    clock = FakeClock(START)
    old = _service(databases.control, clock)
    scope = Scope(TENANT, "default", "default")
    old.register_job(scope.tenant, "default", JobSpec("job", "python:handlers:ok"), actor="test")
    ShardService(databases, clock).move(TENANT, "s1", actor="ops")
    stale = ScheduleSpec(name="late", job="job", cron="* * * * *")
    # A writer past its checks: the row itself is refused.
    with pytest.raises(TenantMoving), databases.control.begin() as conn:
        insert_rows(conn, [schedule_row("late", next_run=START)])
    with pytest.raises(TenantMoving):
        old.register_job(
            scope.tenant, "default", JobSpec("other", "python:handlers:ok"), actor="stale"
        )
    # Another tenant still writes there; the moved one writes on its new shard.
    old.register_job("globex", "default", JobSpec("job", "python:handlers:ok"), actor="test")
    _service(databases.database("s1"), clock).create_schedule(scope, stale, actor="ops")
    # Moved back, the shard takes its rows again.
    ShardService(databases, clock).move(TENANT, "default", actor="ops")
    old.create_schedule(scope, ScheduleSpec(name="back", job="job", cron="0 * * * *"), actor="ops")
    with databases.control.read() as conn:
        names = sorted(row["name"] for row in tenant_moves.read_rows(conn, TENANT)["schedules"])
    assert names == ["back", "late"]


@pytest.mark.postgres
def test_a_move_waits_for_a_write_in_flight_and_carries_its_row(pg_pair: ShardDatabases) -> None:
    """A write of the tenant holds its fence lock shared until it commits: the move waits
    for it, then carries the row it wrote."""
    databases, control = pg_pair, pg_pair.control
    clock = FakeClock(START)
    add_job(control)
    done = threading.Event()

    def move() -> None:
        ShardService(databases, clock).move(TENANT, "s1", actor="ops")
        done.set()

    from cronplane.store.schedules import insert_rows
    from firing_support import schedule_row

    with control.begin() as conn:
        insert_rows(conn, [schedule_row("in-flight", next_run=START)])  # fence lock shared
        moving = threading.Thread(target=move)
        moving.start()
        assert not done.wait(1.0), "the move did not wait for the write in flight"
    assert done.wait(20)
    moving.join()
    with databases.database("s1").read() as conn:
        names = [row["name"] for row in tenant_moves.read_rows(conn, TENANT)["schedules"]]
    assert names == ["in-flight"]


def test_a_node_that_does_not_dispatch_takes_no_share(databases: ShardDatabases) -> None:
    """An API-only or worker-only node is not counted: the dispatching node leads all four."""
    clock = FakeClock(START)
    dispatching = node(databases, clock, "n1")
    api_only = ShardNode(databases, NodeOptions(dispatcher=False, workers=0, ttl=TTL), clock)
    rounds([dispatching, api_only], clock, 6)
    assert set(leaders(databases, clock.now()).values()) == {"n1"}
    given = 0
    for shard in databases.shards():
        with databases.database(shard.name).read() as conn:
            query = select(events.c.id).where(events.c.code == ev.LEADER_RELEASED.text)
            given += len(conn.execute(query).all())
    assert given == 0  # no churn: nothing given back for a node that would not take it


def test_a_node_without_a_dispatcher_does_not_count_among_the_leaders(
    databases: ShardDatabases,
) -> None:
    """A `cronplane worker` process runs a ShardNode too: it leads nothing, so it must not
    shrink the dispatchers' share (counted, it left shards led only now and then)."""
    clock = FakeClock(START)
    workers_only = NodeOptions(dispatcher=False, workers=0, ttl=TTL, alerts=False)
    nodes = [node(databases, clock, "n1"), node(databases, clock, "n2")]
    nodes.append(node(databases, clock, "w1", workers_only))
    rounds(nodes, clock, 12)
    led = leaders(databases, clock.now())
    assert None not in led.values(), led
    assert sorted(Counter(led.values()).values()) == [2, 2], led
    with databases.control.read() as conn:
        assert len(shard_map.live_leads(conn, clock.now(), timedelta(seconds=TTL))) == 2


def test_items_a_moved_tenant_left_queued_run_on_the_old_shard(
    databases: ShardDatabases,
) -> None:
    """Its job and schedule rows have left with it: the old shard's worker runs the items
    with them as they left, instead of failing them "job missing"."""
    clock = FakeClock(START)
    control = databases.control
    add_job(control, target="python:worker_handlers:ok")
    add_schedule(control, "every-minute-0", next_run=START, overlap="allow")
    dispatching = node(databases, clock, "n1")
    dispatching.tick()  # START's occurrence: an item queued on the default shard
    report = ShardService(databases, clock).move(TENANT, "s1", actor="ops")
    assert report.moved and report.draining_items == 1
    worker_handlers.CALLS.clear()
    worker = Worker(control, clock, heartbeat=False, jitter=lambda: 0.0, pace=0.0)
    assert worker.run_once() is True
    with control.read() as conn:
        (item,) = conn.execute(select(queue_items)).all()
    assert item.status == "succeeded", item.error
    ((_, context),) = worker_handlers.CALLS
    assert context.schedule == "every-minute-0" and context.tenant == TENANT
    with control.read() as conn:  # what it ran with stays until then
        assert tenant_moves.left_behind(conn, [TENANT])[1] == {item.schedule_id: "every-minute-0"}
    # Nothing waits on s1 when the tenant leaves it: that move drops its carried copy.
    ShardService(databases, clock).move(TENANT, "s2", actor="ops")
    with databases.database("s1").read() as conn:
        carried = conn.execute(
            select(tenant_moves_table.c.rows).where(tenant_moves_table.c.direction == "out")
        ).scalars()
        assert list(carried) == [None]
