"""`cronplane_fires_coalesced_total` counts the missed occurrences a catch-up folds
into one fire, read from /metrics over HTTP like a scraper does."""

from __future__ import annotations

from datetime import timedelta

import httpx
from live_server import serving

from cronplane.clock import FakeClock
from cronplane.processes.node import Node, NodeOptions
from cronplane.store.database import Database
from firing_support import START, add_job, add_schedule, ledger

SERIES = "cronplane_fires_coalesced_total"


def _scraped(url: str) -> float:
    text = httpx.get(url + "/metrics").text
    values = [line.split()[-1] for line in text.splitlines() if line.startswith(SERIES + " ")]
    assert values, f"{SERIES} is not exposed"
    return float(values[0])


def test_a_catch_up_counts_its_folded_occurrences(database: Database) -> None:
    add_job(database)
    add_schedule(database, "every-minute", next_run=START)  # * * * * *
    add_schedule(database, "on-time", next_run=START + timedelta(minutes=5))
    # Down from 10:00 to 10:05: six occurrences of one row are due, one of the other.
    clock = FakeClock(START + timedelta(minutes=5, seconds=1))
    node = Node(database, NodeOptions(workers=0), clock)
    assert node.dispatcher is not None and node.dispatcher.on_tick is not None
    with serving(database, clock) as url:
        before = _scraped(url)
        report = node.dispatcher.tick()
        assert report.fired == 2
        node.dispatcher.on_tick(report)
        after = _scraped(url)
    details = [row.detail for row in ledger(database) if row.detail and "coalesced" in row.detail]
    assert sorted(d["coalesced"] for d in details) == [1, 6]
    # Six occurrences fired as one: five were folded; the on-time row folds none.
    assert after - before == 5
