"""The fire batch's hand-encoded rows: each row decided on its own, stored as Core would.

A batch shares one decision among rows with the same inputs, writes its rows
as multi-row VALUES (SQLite) or COPY text (PostgreSQL), and updates the
schedules one statement per decision; these tests hold that to the
row-by-row result on both databases.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import Connection, update
from sqlalchemy.exc import OperationalError

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.store.database import Database
from cronplane.store.dialects import pg_bulk
from cronplane.store.tables import queue_items, schedule_state
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


def test_a_mixed_batch_decides_every_row_on_its_own(database: Database) -> None:
    clock = FakeClock(START + timedelta(minutes=7, seconds=30))
    now = clock.now()
    add_job(database)
    add_job(database, "other", options={"priority": 3})
    add_job(database, "off", status="inactive")
    rows = [
        schedule_row("a", next_run=START),  # fires, coalesces 8 minutes
        schedule_row("b", next_run=START),  # the same decision as "a"
        schedule_row("c", next_run=START + timedelta(minutes=5)),  # fires, coalesces 3
        schedule_row("d", next_run=START, cron="*/5 * * * *"),  # fires, other cron
        schedule_row("e", next_run=START, job="other"),  # fires, other job options
        schedule_row("f", next_run=START, job="off"),  # job missing
        schedule_row("g", next_run=START, cron="broken"),  # calc failed, disabled
        schedule_row("h", next_run=START, misfire_grace=10),  # latest occurrence 30 s old
        schedule_row("i", next_run=START, overlap="allow"),  # fires despite an active item
        schedule_row("j", next_run=START),  # skipped: an item is active
        schedule_row("k", next_run=START, tenant="globex"),  # job missing in this tenant
    ]
    add_schedules(database, rows)
    by_name = {row["name"]: row for row in rows}
    enqueue_items(
        database,
        [
            item_row(source="manual", now=START, schedule_id=by_name[name]["id"])
            for name in ("i", "j")
        ],
    )

    report = dispatcher(database, clock).tick()
    assert report.error is None and len(report.batches) == 1

    active = {by_name["i"]["id"], by_name["j"]["id"]}
    for row in rows:
        job_active = row["job"] in ("job", "other") and row["tenant"] == "acme"
        expected = decided_alone(row, now, job_active=job_active, active=row["id"] in active)
        (event,) = ledger(database, row["id"])
        stored = schedule(database, row["id"])
        assert event.scheduled_for == expected.scheduled_for, row["name"]
        assert event.fired_at == now and event.created_at == now
        assert event.detail["coalesced"] == expected.coalesced
        assert event.detail["first_due"] == row["next_run"].isoformat()
        assert event.detail["term"] == report.term
        assert stored.next_run == expected.next_run
        fired = [item for item in items(database, row["id"]) if item.source == "schedule"]
        if expected.outcome is Outcome.FIRE:
            assert event.code == ev.SCHEDULE_FIRED.text, row["name"]
            (item,) = fired
            assert event.item_id == item.id
            assert item.scheduled_for == expected.scheduled_for
            assert item.payload == row["payload"] and item.job == row["job"]
            assert item.priority == (3 if row["job"] == "other" else 0)
            assert item.status == "queued" and item.attempts == 0 and item.max_attempts == 3
            assert item.available_at == now and item.expires_at == now + timedelta(hours=5)
            assert stored.last_run == now and stored.revision == 1
        else:
            assert fired == [] and event.item_id is None, row["name"]
            assert stored.last_run == START - timedelta(hours=1)
            assert stored.enabled is (expected.outcome is not Outcome.CALC_FAILED)
            assert stored.revision == (2 if expected.outcome is Outcome.CALC_FAILED else 1)
    outcomes = {
        name: report.counts[outcome]
        for name, outcome in (("fire", Outcome.FIRE), ("missing", Outcome.JOB_MISSING))
    }
    assert outcomes == {"fire": 6, "missing": 2}
    assert report.counts[Outcome.CALC_FAILED] == 1
    assert report.counts[Outcome.SKIPPED_MISFIRE] == 1
    assert report.counts[Outcome.SKIPPED_OVERLAP] == 1
    assert ledger(database, by_name["g"]["id"])[0].detail["error"]


def test_text_with_copy_special_characters_is_stored_as_given(database: Database) -> None:
    clock = FakeClock(START)
    add_job(database)
    payload = {"text": "tab\there\nnew line\\backslash\rcr", "é": "ü", "n": [1, None]}
    row = schedule_row("odd\tname\\x", next_run=START, payload=payload)
    add_schedules(database, [row])
    assert dispatcher(database, clock).tick().fired == 1
    (item,) = items(database)
    (event,) = ledger(database)
    assert item.payload == payload
    assert event.schedule_name == "odd\tname\\x"


def test_a_batch_larger_than_one_insert_statement(database: Database) -> None:
    clock = FakeClock(START)
    add_job(database)
    # Two due instants and two crons: four decisions, rows interleaved.
    add_schedules(
        database,
        [
            schedule_row(
                f"s{i}",
                next_run=START - timedelta(minutes=i % 2),
                cron="* * * * *" if i % 3 else "*/5 * * * *",
            )
            for i in range(2_500)
        ],
    )
    # One lane: the point is one transaction bigger than one statement.
    report = dispatcher(database, clock, batch_size=3_000, lanes=1).tick()
    assert report.fired == 2_500 and len(report.batches) == 1
    assert len(items(database)) == 2_500 and len(ledger(database)) == 2_500
    assert len({item.id for item in items(database)}) == 2_500
    check_exactly_once(database)


def test_a_changed_row_fails_the_compare_and_set(database: Database) -> None:
    add_job(database)
    rows = [schedule_row(f"s{i}", next_run=START) for i in range(3)]
    add_schedules(database, rows)
    later = START + timedelta(minutes=1)
    keys = [row["id"] for row in rows]
    if database.dialect == "sqlite":
        keys = [key.hex for key in keys]
    with database.begin() as conn:
        conn.execute(
            update(schedule_state)
            .where(schedule_state.c.id == rows[0]["id"])
            .values(next_run=later)
        )
        enc = database.backend.params
        matched = database.backend.update_in(
            conn,
            schedule_state,
            ("next_run",),
            (enc.datetime(later),),
            match=("next_run", enc.datetime(START)),
            key="id",
            keys=keys,
        )
    assert matched == 2


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("plain", "plain"),
        ("a\tb", "a\\tb"),
        ("a\nb\rc", "a\\nb\\rc"),
        ("back\\slash", "back\\\\slash"),
    ],
)
def test_copy_escape(text: str, field: str) -> None:
    assert pg_bulk.copy_escape(text) == field
    assert pg_bulk.needs_copy_escape(text) is (text != field)


def test_insert_rows_of_more_than_one_statement(database: Database) -> None:
    enc = database.backend.row_encoder
    columns = (
        "id", "tenant", "stack", "environment", "job", "payload", "source", "priority",
        "status", "available_at", "attempts", "max_attempts", "created_at", "updated_at",
    )  # fmt: skip
    now = enc.datetime(START)
    rows = [
        (
            enc.uuid(uuid.uuid4()), enc.text("acme"), "default", "default", "job",
            enc.json({"n": n}), "api", enc.int(0), "queued", now, enc.int(0), enc.int(3),
            now, now,
        )
        for n in range(2_345)
    ]  # fmt: skip
    with database.begin() as conn:
        database.backend.insert_rows(conn, queue_items, columns, rows)
    stored = items(database)
    assert sorted(item.payload["n"] for item in stored) == list(range(2_345))
    assert {item.created_at for item in stored} == {START}


def test_sqlite_checkpoints_once_after_a_burst(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fire transactions defer SQLite's checkpoint; the dispatcher runs it after the burst."""
    import cronplane.processes.dispatcher as dispatcher_module
    from cronplane.store import dispatch

    calls: list[str] = []

    def checkpoint(conn: Connection) -> None:
        calls.append("checkpoint")
        dispatch.checkpoint(conn)

    monkeypatch.setattr(dispatcher_module, "checkpoint", checkpoint)
    clock = FakeClock(START)
    add_job(sqlite_database)
    add_schedules(
        sqlite_database,
        [schedule_row(f"s{i}", next_run=START, overlap="allow") for i in range(25)],
    )
    leader = dispatcher(sqlite_database, clock, batch_size=10)
    assert leader.tick().fired == 25
    # One checkpoint for three batches, after the last commit.
    assert len(calls) == 1
    assert leader.tick().fired == 0
    assert len(calls) == 1  # nothing fired, nothing to checkpoint

    def failing(conn: Connection) -> None:
        raise OperationalError("PRAGMA wal_checkpoint", None, Exception("busy"))

    monkeypatch.setattr(dispatcher_module, "checkpoint", failing)
    clock.advance(60)
    report = leader.tick()
    assert report.fired == 25 and report.error is None  # housekeeping, not a tick failure
