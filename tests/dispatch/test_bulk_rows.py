"""The dispatcher's bulk writes (store.dialects' insert_rows, update_in) store values as Core does."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows
from cronplane.store.tables import events, schedule_state
from firing_support import START, add_schedule, schedule_row


def test_bulk_event_reads_back_like_core(database: Database) -> None:
    when = datetime(2026, 3, 2, 10, 0, 0, 123456, tzinfo=UTC)
    sid = uuid.uuid4()
    enc = database.backend.row_encoder
    with database.begin() as conn:
        database.backend.insert_rows(
            conn,
            events,
            ("code", "tenant", "schedule_id", "actor", "message", "scheduled_for", "created_at",
             "detail"),
            [("V200610SCHTRG", enc.text("acme"), enc.uuid(sid), "t", "m", enc.datetime(when),
              enc.datetime(when), enc.json({"a": [1, "é"]}))],
        )  # fmt: skip
    with database.read() as conn:
        row = conn.execute(select(events)).one()
        found = conn.execute(
            select(events.c.id).where(events.c.schedule_id == sid, events.c.scheduled_for == when)
        ).scalar()
    assert row.schedule_id == sid and row.scheduled_for == when
    assert row.detail == {"a": [1, "é"]} and found == row.id


def test_bulk_update_compare_and_set(database: Database) -> None:
    sid = add_schedule(database, next_run=START)
    other = schedule_row("other", next_run=START)
    later = START + timedelta(minutes=1)
    with database.begin() as conn:
        insert_rows(conn, [other])
        params = database.backend.params
        matched = [
            database.backend.update_in(
                conn,
                schedule_state,
                ("next_run",),
                (params.datetime(later),),
                match=("next_run", params.datetime(due)),
                key="id",
                keys=[params.uuid(key)],
            )
            for key, due in ((sid, START), (other["id"], START - timedelta(seconds=1)))
        ]
    assert matched == [1, 0]
    with database.read() as conn:
        rows = dict(conn.execute(select(schedule_state.c.id, schedule_state.c.next_run)).all())
    assert rows == {sid: later, other["id"]: START}
