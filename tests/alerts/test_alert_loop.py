"""The alert loop: one evaluator across nodes by the `alerts` lease, taken over when its
holder stops; a node that runs no dispatcher still evaluates. Housekeeping prunes
closed alerts with the history."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest

from cronplane.clock import FakeClock
from cronplane.core.alerts import Alert
from cronplane.processes.alert_loop import AlertLoop
from cronplane.processes.node import Node, NodeOptions
from cronplane.service import housekeeping
from cronplane.store.alerts import list_alerts, save_alert
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


def test_prune_history_drops_alerts_closed_past_the_retention(database: Database) -> None:
    def alert(days: int, status: str) -> Alert:
        at = START - timedelta(days=days)
        return Alert(
            uuid4(), "acme", uuid4(), "r", "failed", uuid4(), "s", "b", "p", status, 1,
            at, at, at, at if status == "closed" else None, None, None, "k", {},
        )  # fmt: skip

    old = alert(40, "closed")
    with database.begin() as conn:
        for row in (old, alert(1, "closed"), replace(alert(40, "open"), detail={"x": 1})):
            save_alert(conn, row, new=True)
    assert housekeeping.prune(database, FakeClock(START), 30)["alerts"] == 1
    with database.read() as conn:
        left = list_alerts(conn, "acme")
    assert len(left) == 2 and old.id not in {a.id for a in left}


def test_an_unreachable_database_logs_one_line_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Issue 33: during an outage the alert loop logged a full traceback per refused
    # connection while the dispatcher and the worker log one line.
    gone = Database(
        "postgresql+psycopg://postgres@127.0.0.1:1/none", connect_args={"connect_timeout": 1}
    )
    loop = AlertLoop(gone, FakeClock(START), holder="node-a")
    with caplog.at_level(logging.WARNING, logger="cronplane.processes.alert_loop"):
        delays = [loop.step(), loop.step()]
    gone.dispose()
    assert delays == [0.5, 1.0] and loop.term is None
    records = [r for r in caplog.records if r.name == "cronplane.processes.alert_loop"]
    assert len(records) == 2
    for record in records:
        assert record.exc_info is None and record.levelno == logging.WARNING
        assert "\n" not in record.getMessage() and "alert evaluation failed" in record.getMessage()
