"""A fire batch's rows, built in SQL or by the driver, against the row-by-row rule.

The batch groups rows by their decision inputs and job; these tests put
several jobs and several decisions in one group or batch, odd payloads and
names, and a row changed under the batch, on both databases.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.store import lease
from cronplane.store.database import Database
from cronplane.store.dispatch import BatchResult, Fencing, fire_batch
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
    occurrences,
    schedule,
    schedule_row,
)


def test_one_decision_shared_by_rows_of_several_jobs(database: Database) -> None:
    clock = FakeClock(START + timedelta(seconds=30))
    now = clock.now()
    add_job(database)
    add_job(database, "fast", options={"priority": 7, "expires_after": 60, "max_attempts": 5})
    add_job(database, "off", status="inactive")
    # The same job name in another stack, with its own options.
    add_job(database, "job", stack="blue", options={"priority": 2})
    jobs = ["job", "fast", "off", "job", "absent"]
    stacks = ["default", "default", "default", "blue", "default"]
    rows = [
        schedule_row(f"s{n}", next_run=START, job=jobs[n % 5], stack=stacks[n % 5])
        for n in range(25)
    ]
    add_schedules(database, rows)

    report = dispatcher(database, clock).tick()
    assert report.fired == 15 and report.counts[Outcome.JOB_MISSING] == 10
    options = {
        ("default", "job"): (0, timedelta(hours=5), 3),
        ("default", "fast"): (7, timedelta(seconds=60), 5),
        ("blue", "job"): (2, timedelta(hours=5), 3),
    }
    for row in rows:
        (event,) = ledger(database, row["id"])
        found = items(database, row["id"])
        job_options = options.get((row["stack"], row["job"]))
        if job_options is None:
            assert found == [] and event.item_id is None
            assert event.code == ev.JOB_MISSING.text, row["name"]
            continue
        (item,) = found
        priority, expiry, max_attempts = job_options
        assert (item.stack, item.job, item.priority) == (row["stack"], row["job"], priority)
        assert item.expires_at == now + expiry and item.max_attempts == max_attempts
        assert event.code == ev.SCHEDULE_FIRED.text and event.item_id == item.id
        assert event.stack == row["stack"] and event.schedule_name == row["name"]
    check_exactly_once(database)


def test_many_decisions_in_one_batch_each_row_as_decided_alone(database: Database) -> None:
    clock = FakeClock(START + timedelta(minutes=10, seconds=20))
    now = clock.now()
    add_job(database)
    crons = ["* * * * *", "*/5 * * * *", "@every 7s", "broken", "never-again"]
    graces = [None, 0, 30, 3_600]
    rows = [
        schedule_row(
            f"s{n}",
            # Spread over ten minutes: most rows have a next_run of their own.
            next_run=START + timedelta(seconds=3 * n),
            cron=crons[n % 5],
            misfire_grace=graces[n % 4],
            overlap="allow" if n % 3 == 0 else "skip",
            job="job" if n % 11 else "absent",
            # Jittered rows (next_run = nominal + offset) and paused ones, held
            # or past their until (the decision resumes them).
            jitter_offset=(0, 2, 0, 5, 0)[n % 5] if n % 4 == 1 else 0,
            paused_at=START - timedelta(hours=2) if n % 13 in (2, 3, 4) else None,
            paused_until=(None, START + timedelta(minutes=5), START)[n % 13 - 2]
            if n % 13 in (2, 3, 4)
            else None,
        )
        for n in range(200)
    ]
    add_schedules(database, rows)
    busy = {row["id"] for row in rows[::7]}
    enqueue_items(database, [item_row(now=START, schedule_id=sid) for sid in busy])

    report = dispatcher(database, clock, batch_size=500).tick()
    assert report.error is None and len(report.batches) == 1

    fired_for = []
    for row in rows:
        decision = decided_alone(row, now, job_active=row["job"] == "job", active=row["id"] in busy)
        event, *ended = ledger(database, row["id"])
        # A row with no occurrence left ends: one V200150SCHEND after its ledger event.
        assert [e.code for e in ended] == ([ev.SCHEDULE_ENDED.text] if decision.ends else [])
        stored = schedule(database, row["id"])
        assert stored.run_count == (1 if decision.outcome is Outcome.FIRE else 0)
        assert event.scheduled_for == decision.scheduled_for, row["name"]
        assert event.detail["coalesced"] == decision.coalesced, row["name"]
        assert event.detail.get("coalesced_at_least", False) is not decision.coalesced_exact
        assert stored.next_run == decision.next_run, row["name"]
        assert stored.enabled is (decision.outcome is not Outcome.CALC_FAILED)
        assert event.detail.get("jitter_offset", 0) == row["jitter_offset"] or decision.disables
        held = decision.outcome is Outcome.SKIPPED_PAUSED
        # A pause ends only when an occurrence at/after its until is decided.
        kept = held or decision.disables
        assert (stored.paused_at is not None) is (row["paused_at"] is not None and kept)
        assert decision.resumes is (row["paused_at"] is not None and not kept)
        if held:
            assert event.detail["note"] == f"note of {row['name']}"
            assert event.detail["paused_by"] == "ops@example.com"
        fired = [item for item in items(database, row["id"]) if item.source == "schedule"]
        if decision.outcome is Outcome.FIRE:
            (item,) = fired
            assert event.item_id == item.id and item.scheduled_for == decision.scheduled_for
            assert stored.last_run == now
            fired_for.append(decision.fire_at)
        else:
            assert fired == [] and event.item_id is None, row["name"]
            assert stored.last_run == START - timedelta(hours=1)
    assert sorted(report.batches[0].fired_for) == sorted(fired_for)
    assert report.fired == len(fired_for) and 0 < report.fired < 200
    # Every outcome but a tenant quota's and an excluded day's (no quota and no calendar
    # here: tests/dispatch/test_fire_quotas.py, tests/dispatch/test_calendar_fires.py).
    assert {outcome for outcome, count in report.counts.items() if count} == set(Outcome) - {
        Outcome.SKIPPED_QUOTA,
        Outcome.SKIPPED_EXCLUDED,
    }


def fire(database: Database, now: datetime, limit: int) -> BatchResult:
    """One fire transaction as the leader (taking the lease when needed)."""
    with database.begin() as conn:
        term = lease.acquire(
            conn, "dispatch", "node-a", known_term=None, now=now, ttl=timedelta(seconds=30)
        )
        if term is None:
            term = lease.read(conn, "dispatch").term  # type: ignore[union-attr]
    with database.begin() as conn:
        return fire_batch(
            conn,
            fencing=Fencing("dispatch", "node-a", term),
            now=now,
            limit=limit,
            occurrences=occurrences,
        )


def test_item_ids_are_uuid7_of_the_instant_unique_across_batches(database: Database) -> None:
    now = START + timedelta(milliseconds=123)
    add_job(database)
    add_schedules(database, [schedule_row(f"s{n}", next_run=START) for n in range(250)])
    batches = []
    # Three batches at one instant: their ids share the millisecond.
    for _ in range(3):
        done = {item.id for item in items(database)}
        assert fire(database, now, 100).counts[Outcome.FIRE] > 0
        batches.append([item for item in items(database) if item.id not in done])
    assert [len(batch) for batch in batches] == [100, 100, 50]
    ids = [item.id for item in items(database)]
    assert len(set(ids)) == 250
    millis = int(now.timestamp() * 1000)
    assert all(i.version == 7 and i.variant == uuid.RFC_4122 for i in ids)
    assert {i.int >> 80 for i in ids} == {millis}
    for batch in batches:
        # Within a batch, ids rise with the schedule id (the order rows are written in).
        by_id = sorted(batch, key=lambda item: item.id)
        assert [i.schedule_id for i in by_id] == sorted(i.schedule_id for i in batch)
    for event in ledger(database):
        assert event.item_id in ids


@pytest.mark.parametrize(
    "payload",
    [
        {"text": "tab\there\nnew line\\backslash\rcr", "quote": 'it\'s "q"'},
        {"é": "ü", "emoji": "\U0001f600", "nul-ish": "\\u0000", "n": [1, None, 2.5, True]},
        {},
        {"nested": {"deep": [{"a": "b\\n"}]}, "long": "x" * 5_000},
    ],
)
def test_payloads_and_names_are_copied_as_stored(
    database: Database, payload: dict[str, Any]
) -> None:
    clock = FakeClock(START)
    add_job(database)
    rows = [
        schedule_row('odd\'name\t"x"\\', next_run=START, payload=payload),
        schedule_row("plain", next_run=START, payload={"other": 1}),
    ]
    add_schedules(database, rows)
    assert dispatcher(database, clock).tick().fired == 2
    for row in rows:
        (item,) = items(database, row["id"])
        (event,) = ledger(database, row["id"])
        assert item.payload == row["payload"]
        assert event.schedule_name == row["name"]


def _move_next_run_on_insert(database: Database, sid: uuid.UUID) -> None:
    """A trigger: the item insert for `sid` moves its schedule's next_run (a racing writer)."""
    with database.begin() as conn:
        if database.dialect == "sqlite":
            conn.exec_driver_sql(
                "CREATE TRIGGER move_next_run AFTER INSERT ON queue_items "
                f"WHEN NEW.schedule_id = '{sid.hex}' BEGIN "
                "UPDATE schedule_state SET next_run = '2000-01-01 00:00:00.000000' "
                "WHERE id = NEW.schedule_id; END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION move_next_run() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN UPDATE schedule_state SET next_run = '2000-01-01Z' WHERE id = NEW.schedule_id; "
                "RETURN NULL; END $$"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER move_next_run AFTER INSERT ON queue_items FOR EACH ROW "
                f"WHEN (NEW.schedule_id = '{sid}') EXECUTE FUNCTION move_next_run()"
            )


def test_a_row_changed_under_the_batch_rolls_the_batch_back(database: Database) -> None:
    add_job(database)
    rows = [schedule_row(f"s{n}", next_run=START, overlap="allow") for n in range(5)]
    add_schedules(database, rows)
    _move_next_run_on_insert(database, rows[2]["id"])
    with pytest.raises(RuntimeError, match="changed under a fire"):
        fire(database, START + timedelta(seconds=1), 100)
    assert items(database) == [] and ledger(database) == []
    assert {schedule(database, row["id"]).next_run for row in rows} == {START}
    with database.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM queue_items")).scalar() == 0


def test_odd_characters_in_the_decision_inputs_still_find_their_job(database: Database) -> None:
    """On SQLite the inputs travel as a JSON array: quotes, backslashes and unicode survive."""
    add_job(database, 'jöb"x\\', stack="st'ack\t", options={"priority": 4})
    rows = [
        schedule_row(f"s{n}", next_run=START, job='jöb"x\\', stack="st'ack\t") for n in range(3)
    ]
    add_schedules(database, rows)
    result = fire(database, START, 10)
    assert result.counts[Outcome.FIRE] == 3
    assert {(item.job, item.stack, item.priority) for item in items(database)} == {
        ('jöb"x\\', "st'ack\t", 4)
    }


def test_a_limited_batch_takes_the_earliest_rows_first(database: Database) -> None:
    add_job(database)
    early = [schedule_row(f"e{n}", next_run=START - timedelta(minutes=1)) for n in range(3)]
    late = [schedule_row(f"l{n}", next_run=START) for n in range(3)]
    add_schedules(database, late + early)
    result = fire(database, START, 4)
    assert result.selected == 4 and result.counts[Outcome.FIRE] == 4
    fired = {item.schedule_id for item in items(database)}
    assert {row["id"] for row in early} <= fired
    assert sum(schedule(database, row["id"]).next_run == START for row in late) == 2
