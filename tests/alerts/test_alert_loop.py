"""The alert loop: one evaluator across nodes by the `alerts` lease, taken over when its
holder stops; a node that runs no dispatcher still evaluates."""

from __future__ import annotations

from datetime import UTC, datetime

from cronplane.alert_loop import AlertLoop
from cronplane.clock import FakeClock
from cronplane.node import Node, NodeOptions
from cronplane.store.database import Database

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def test_one_loop_evaluates_and_another_takes_over_when_it_stops(database: Database) -> None:
    clock = FakeClock(START)
    a = AlertLoop(database, clock, holder="node-a")
    b = AlertLoop(database, clock, holder="node-b")
    a.step()
    b.step()
    assert a.term is not None and a.last is not None
    assert b.term is None and b.last is None  # a holds the lease: b does not evaluate
    clock.advance(10)
    a.step()
    b.step()
    assert b.term is None  # renewed by a
    a.release()
    b.step()
    assert b.term is not None and b.last is not None


def test_a_lapsed_holder_is_replaced_after_the_ttl(database: Database) -> None:
    clock = FakeClock(START)
    a = AlertLoop(database, clock, holder="node-a", ttl=30)
    b = AlertLoop(database, clock, holder="node-b", ttl=30)
    a.step()
    clock.advance(29)
    b.step()
    assert b.term is None
    clock.advance(2)  # a froze: its lease lapsed
    b.step()
    assert b.term is not None


def test_every_kind_of_node_runs_the_loop(database: Database) -> None:
    worker_only = Node(database, NodeOptions(dispatcher=False, workers=1), FakeClock(START))
    assert worker_only.alerts is not None and worker_only.dispatcher is None
    quiet = Node(database, NodeOptions(dispatcher=False, workers=0, alerts=False))
    assert quiet.alerts is None
