"""Leadership: one leader per group, takeover within one TTL, a deposed leader is fenced.

Includes the property "one queue item per occurrence" under random
interleavings of two dispatchers' ticks, clock jumps and stale leaders.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store import lease
from cronplane.store.database import Database
from cronplane.store.tables import events, metadata
from firing_support import START, add_job, add_schedule, items, ledger, occurrences

TTL = 10.0


def pair(database: Database, clock: FakeClock) -> tuple[Dispatcher, Dispatcher]:
    a = Dispatcher(database, clock, holder="a", ttl=TTL, occurrences=occurrences)
    b = Dispatcher(database, clock, holder="b", ttl=TTL, occurrences=occurrences)
    return a, b


def test_only_one_leads(database: Database) -> None:
    clock = FakeClock(START)
    a, b = pair(database, clock)
    assert a.tick().leader
    follower = b.tick()
    assert not follower.leader and follower.fired == 0
    # The follower looks again no later than a third of the TTL.
    assert 0 < follower.sleep <= TTL / 3
    clock.advance(TTL / 2)
    assert a.tick().leader and not b.tick().leader
    with database.read() as conn:
        acquired = conn.execute(
            select(events).where(events.c.code == ev.LEADER_ACQUIRED.text)
        ).all()
    assert [e.detail["holder"] for e in acquired] == ["a"]


def test_takeover_within_one_ttl_of_leader_death(database: Database) -> None:
    clock = FakeClock(START)
    a, b = pair(database, clock)
    a.tick()
    died_at = clock.now()  # a renews here for the last time, then dies
    b.tick()
    clock.advance(TTL - 0.5)
    assert not b.tick().leader
    clock.advance(0.5)
    report = b.tick()
    assert report.leader and report.term == 2
    assert clock.now() - died_at <= timedelta(seconds=TTL)


def test_graceful_release_hands_over_at_once(database: Database) -> None:
    clock = FakeClock(START)
    a, b = pair(database, clock)
    a.tick()
    a.release()
    assert b.tick().leader


def test_deposed_leader_is_fenced_and_commits_nothing(database: Database) -> None:
    clock = FakeClock(START)
    a, b = pair(database, clock)
    add_job(database)
    assert a.tick().leader
    clock.advance(TTL + 1)  # a is paused past its lease
    assert b.tick().leader
    add_schedule(database, next_run=clock.now())
    # a resumes believing it just renewed: its fire transaction must be fenced.
    a._renewed_mono = clock.monotonic()
    report = a.tick()
    assert report.fenced and not report.leader and report.fired == 0
    assert items(database) == [] and ledger(database) == []
    assert b.tick().fired == 1
    # Back as a follower, a stays one.
    assert not a.tick().leader


def test_lease_row_is_created_safely_by_racing_nodes(database: Database) -> None:
    with database.begin() as conn:
        lease.ensure_row(conn, "g")
        lease.ensure_row(conn, "g")
        term = lease.acquire(conn, "g", "x", known_term=None, now=START, ttl=timedelta(seconds=5))
    assert term == 1
    with database.begin() as conn:
        # Still valid: nobody else may take it; we renew in place.
        assert lease.acquire(conn, "g", "y", known_term=None, now=START, ttl=timedelta(5)) is None
        assert lease.acquire(conn, "g", "x", known_term=1, now=START, ttl=timedelta(5)) == 1
        expired = START + timedelta(days=6)
        assert lease.acquire(conn, "g", "y", known_term=None, now=expired, ttl=timedelta(5)) == 2
        # x's term is gone: it cannot renew, and its fence fails.
        assert lease.acquire(conn, "g", "x", known_term=1, now=expired, ttl=timedelta(5)) is None


# -- property: one item per occurrence under random interleavings -----------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("tick"), st.sampled_from("ab")),
        st.tuples(st.just("advance"), st.sampled_from([0.5, 3.0, 11.0, 61.0, 600.0])),
        # A paused leader resuming without renewing first: it believes it leads.
        st.tuples(st.just("stale"), st.sampled_from("ab")),
    ),
    min_size=1,
    max_size=40,
)


def wipe(database: Database) -> None:
    with database.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_one_item_per_occurrence_under_interleavings(
    database: Database, ops: list[tuple[str, object]]
) -> None:
    wipe(database)
    clock = FakeClock(START)
    add_job(database)
    ids = [
        add_schedule(database, "minutely", overlap="allow"),
        add_schedule(database, "every-7s", cron="@every 7s", overlap="allow"),
        add_schedule(database, "graced", misfire_grace=2, overlap="allow"),
    ]
    nodes = dict(zip("ab", pair(database, clock), strict=True))
    for op, arg in ops:
        if op == "advance":
            clock.advance(float(arg))  # type: ignore[arg-type]
            continue
        node = nodes[str(arg)]
        if op == "stale" and node.term is not None:
            node._renewed_mono = clock.monotonic()
        report = node.tick()
        assert report.error is None, report.error

    all_items = items(database)
    keys = [(i.schedule_id, i.scheduled_for) for i in all_items]
    assert len(keys) == len(set(keys))
    fired = [e for e in ledger(database) if e.code == ev.SCHEDULE_FIRED.text]
    assert sorted(e.item_id for e in fired) == sorted(i.id for i in all_items)
    # The ledger covers each schedule's occurrences without gap or overlap:
    # every event stands for [first_due, scheduled_for], `coalesced` of them.
    by_schedule: dict[object, list[datetime]] = defaultdict(list)
    for event in ledger(database):
        by_schedule[event.schedule_id].append(event)  # type: ignore[arg-type]
    crons = {ids[0]: "* * * * *", ids[1]: "@every 7s", ids[2]: "* * * * *"}
    for sid, evs in by_schedule.items():
        step = occurrences(crons[sid], "UTC")  # type: ignore[index]
        expected = START
        for event in evs:
            assert datetime.fromisoformat(event.detail["first_due"]) == expected
            covered = 1
            occurrence = expected
            while occurrence < event.scheduled_for:
                occurrence = step(occurrence)  # type: ignore[assignment]
                covered += 1
            assert occurrence == event.scheduled_for and covered == event.detail["coalesced"]
            assert event.scheduled_for <= event.fired_at
            expected = step(event.scheduled_for)  # type: ignore[assignment]
