"""`schedule history` for people: coalesced counts, lateness, and item ids by their tails."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from cli_process import Cronplane

from cronplane.clock import FakeClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database
from firing_support import START, add_job, add_schedule, items


def test_history_shows_coalesced_counts_and_distinct_item_tails(
    tmp_path: Path, cronplane: Cronplane
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    add_job(database)
    add_schedule(database, "every-minute", next_run=START, overlap="allow")
    clock = FakeClock(START + timedelta(minutes=5, seconds=1))
    dispatcher = Dispatcher(database, clock)
    assert dispatcher.tick().fired == 1  # 10:00 … 10:05 as one fire
    for _ in range(2):
        clock.advance(minutes=1)
        assert dispatcher.tick().fired == 1
    ids = [str(row.id) for row in items(database)]
    database.dispose()
    assert len(ids) == 3 and len({i[:8] for i in ids}) < 3, "UUIDv7 heads are shared"
    out = cronplane("schedule", "history", "every-minute")
    assert out.code == 0, out.stderr
    assert out.stdout.count("coalesced 6") == 1 and "coalesced 1" not in out.stdout
    # Each fire came 1 s after its occurrence (the clock sits at :01).
    assert out.stdout.count("1,000 ms late") == 3
    tails = [word.strip("…") for word in out.stdout.split() if word.startswith("…")]
    assert len(tails) == 3 and len(set(tails)) == 3 and all(len(t) >= 8 for t in tails)
    assert sorted(next(i for i in ids if i.endswith(t)) for t in tails) == sorted(ids)
    document = cronplane("schedule", "history", "every-minute", "--json").json()
    assert isinstance(document, list)
    assert sorted(e["detail"]["coalesced"] for e in document if e["detail"]) == [1, 1, 6]
    assert [e["detail"]["late_ms"] for e in document if e["detail"]] == [1000] * 3
