"""A fire batch larger than one chunk of PostgreSQL's streamed COPY, on both databases.

On PostgreSQL a batch's items go out while later rows are still being decided
(chunks of `_STREAM_CHUNK`), rows that may cancel (`cancel_running` with an
active item) are decided and cancelled first, and the ledger follows the
UPDATE. These hold the result to the row-by-row oracle, and a failure in the
last chunk to "nothing written" (the same checks run on SQLite, whose path
does not stream: the guarantees are the database's, not the path's).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.store.database import Database
from cronplane.store.dispatch.postgresql import _STREAM_CHUNK
from cronplane.store.tables import queue_items
from firing_support import (
    START,
    add_job,
    add_schedules,
    check_exactly_once,
    decided_alone,
    dispatcher,
    enqueue_items,
    item_row,
    items,
    ledger,
    schedule,
    schedule_row,
)

# Three chunks and a part.
COUNT = 3 * _STREAM_CHUNK + 7


def test_a_batch_of_several_chunks_with_cancels_among_them(database: Database) -> None:
    clock = FakeClock(START + timedelta(minutes=2, seconds=30))
    now = clock.now()
    add_job(database)
    # (The oracle models an active item as running: `buffer_one` would differ.)
    overlaps = ("skip", "cancel_running", "allow")
    rows = [schedule_row(f"s{i:04}", next_run=START, overlap=overlaps[i % 3]) for i in range(COUNT)]
    add_schedules(database, rows)
    # Every 97th schedule has a queued item (from a manual run): spread over
    # every chunk, some of them `cancel_running` rows decided before the stream.
    busy = [row for n, row in enumerate(rows) if n % 97 == 1 or n % 97 == 5]
    assert {row["overlap"] for row in busy} >= {"cancel_running", "skip", "allow"}
    enqueue_items(
        database, [item_row(source="manual", now=START, schedule_id=row["id"]) for row in busy]
    )
    busy_ids = {row["id"] for row in busy}

    report = dispatcher(database, clock, batch_size=COUNT, lanes=1).tick()

    assert report.error is None and len(report.batches) == 1
    fired = 0
    for row in rows:
        expected = decided_alone(row, now, job_active=True, active=row["id"] in busy_ids)
        event = ledger(database, row["id"])[-1]  # after a cancel's event, if any
        assert event.scheduled_for == expected.scheduled_for, row["name"]
        assert event.detail["coalesced"] == expected.coalesced == 3
        assert schedule(database, row["id"]).next_run == expected.next_run
        new = [i for i in items(database, row["id"]) if i.source == "schedule"]
        if expected.outcome is Outcome.FIRE:
            fired += 1
            (item,) = new
            assert event.item_id == item.id and item.status == "queued"
        else:
            assert new == [] and event.item_id is None, row["name"]
        if row["id"] in busy_ids and row["overlap"] == "cancel_running":
            (manual,) = [i for i in items(database, row["id"]) if i.source == "manual"]
            assert manual.status == "cancelled" and manual.cancelled_by == "dispatcher"
            codes = [e.code for e in ledger(database, row["id"])]
            # The cancel is recorded before the fire.
            assert codes.index(ev.SCHEDULE_FIRED.text) > 0
    assert report.fired == fired == report.counts[Outcome.FIRE]
    assert report.counts[Outcome.SKIPPED_OVERLAP] == COUNT - fired
    # Item ids: one ascending run for the whole batch (the primary key is appended to).
    ids = sorted(item.id for item in items(database) if item.source == "schedule")
    assert len(set(ids)) == fired
    # One ledger event per occurrence row and none twice (check_exactly_once's
    # ledger walk does not read the cancels' events).
    fires = [e for e in ledger(database) if e.actor == "dispatcher" and "coalesced" in e.detail]
    assert len(fires) == COUNT == len({e.schedule_id for e in fires})


def test_a_failure_in_the_last_chunk_writes_nothing(database: Database) -> None:
    clock = FakeClock(START)
    add_job(database)
    rows = [schedule_row(f"s{i:04}", next_run=START) for i in range(COUNT)]
    add_schedules(database, rows)
    # The occurrence of the last row in schedule-id order (the last chunk)
    # already has a finished item: its fire breaks the unique occurrence key.
    last = max(rows, key=lambda row: str(row["id"]))
    done = item_row(source="schedule", now=START, schedule_id=last["id"], scheduled_for=START)
    enqueue_items(database, [{**done, "status": "succeeded"}])

    d = dispatcher(database, clock, batch_size=COUNT, lanes=1)
    report = d.tick()

    assert report.error is not None and report.fired == 0
    assert [i.status for i in items(database)] == ["succeeded"]
    assert ledger(database) == []
    assert {schedule(database, row["id"]).next_run for row in rows} == {START}
    # The next tick, without the clash, fires every row once.
    with database.begin() as conn:
        conn.execute(delete(queue_items))
    assert d.tick().fired == COUNT
    check_exactly_once(database)
