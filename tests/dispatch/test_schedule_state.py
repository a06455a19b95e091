"""schedule_state: a fire writes only the narrow state table, and a schedule's
state lives and dies with it (store.tables, migration 0014)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest
from sqlalchemy import func, select

from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.core.versions import Change
from cronplane.store.database import Database
from cronplane.store.dialects.listener import plain_url
from cronplane.store.schedules import delete_schedules, get_by_id
from cronplane.store.tables import schedule_state, schedules
from firing_support import (
    START,
    TENANT,
    add_job,
    add_schedule,
    add_schedules,
    dispatcher,
    schedule,
    schedule_row,
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


def schedules_rows(database: Database) -> dict[UUID, tuple[Any, ...]]:
    """Every row of `schedules` alone, by id."""
    with database.read() as conn:
        return {row.id: tuple(row) for row in conn.execute(select(schedules))}


def updated_tuples(database: Database) -> dict[str, int]:
    """PostgreSQL's count of rows updated, per table, as its statistics have it now."""
    with psycopg.connect(plain_url(database), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, n_tup_upd FROM pg_stat_user_tables "
            "WHERE relname IN ('schedules', 'schedule_state')"
        ).fetchall()
    return {str(name): int(count) for name, count in rows}


def flushed(database: Database) -> None:
    """Close the pool: each backend reports its pending statistics as it exits."""
    database.dispose()
    time.sleep(0.5)


def test_a_plain_fire_writes_nothing_to_schedules(database: Database, clock: FakeClock) -> None:
    add_job(database)
    rows = [schedule_row(f"s{n}", next_run=START) for n in range(20)]
    # Outcomes other than a fire write the state only too (here: job missing, overlap skip).
    rows.append(schedule_row("orphan", next_run=START, job="gone"))
    add_schedules(database, rows)
    before = schedules_rows(database)
    if database.dialect == "postgresql":
        flushed(database)
        counted = updated_tuples(database)
    report = dispatcher(database, clock).tick()
    assert report.fired == 20 and report.counts[Outcome.JOB_MISSING] == 1
    assert schedules_rows(database) == before
    for row in rows:
        state = schedule(database, row["id"])
        assert state.next_run == START + timedelta(minutes=1)
        assert state.run_count == (0 if row["job"] == "gone" else 1)
    if database.dialect == "postgresql":
        flushed(database)
        deadline = time.monotonic() + 30
        after = updated_tuples(database)
        # Until the dispatcher's backends have reported (its state updates show).
        while after["schedule_state"] < counted["schedule_state"] + len(rows):
            assert time.monotonic() < deadline, (counted, after)
            time.sleep(0.2)
            after = updated_tuples(database)
        assert after["schedules"] == counted["schedules"], (counted, after)


def test_the_rare_fire_writes_to_schedules_still_happen(
    database: Database, clock: FakeClock
) -> None:
    """Disabling (a broken cron) bumps the revision and updated_at; a pause whose
    until is reached is cleared: both in `schedules`, in the same batch."""
    add_job(database)
    broken = add_schedule(database, "broken", cron="broken")
    held = add_schedule(
        database,
        "held",
        paused_at=START - timedelta(hours=1),
        paused_until=START - timedelta(seconds=1),
    )
    plain = add_schedule(database, "plain")
    untouched = schedules_rows(database)[plain]
    dispatcher(database, clock).tick()
    row = schedule(database, broken)
    assert not row.enabled and row.next_run is None
    assert row.revision == 2 and row.updated_at == START
    resumed = schedule(database, held)
    assert resumed.paused_at is None and resumed.paused_until is None
    assert resumed.run_count == 1 and resumed.revision == 1
    assert schedules_rows(database)[plain] == untouched


def test_deleting_a_schedule_deletes_its_state(database: Database) -> None:
    gone, kept = add_schedule(database, "gone"), add_schedule(database, "kept")
    with database.begin() as conn:
        assert delete_schedules(conn, [gone], change=Change("test", "service", START)) == 1
    with database.read() as conn:
        ids = set(conn.execute(select(schedule_state.c.id)).scalars())
        assert get_by_id(conn, TENANT, gone) is None
        assert get_by_id(conn, TENANT, kept) is not None
    assert ids == {kept}


def test_every_schedule_has_one_state_row_with_its_tenant(database: Database) -> None:
    add_schedules(
        database,
        [schedule_row(f"s{n}", next_run=START, tenant=f"t{n % 3}") for n in range(9)],
    )
    joined = select(func.count()).select_from(
        schedules.join(
            schedule_state,
            (schedule_state.c.id == schedules.c.id)
            & (schedule_state.c.tenant == schedules.c.tenant),
        )
    )
    with database.read() as conn:
        assert conn.execute(joined).scalar_one() == 9
        assert conn.execute(select(func.count()).select_from(schedule_state)).scalar_one() == 9


@pytest.mark.postgres
def test_a_locked_read_locks_both_rows(pg_database: Database) -> None:
    """`for_update` holds the schedule's row and its state's: an edit in progress
    is skipped by a fire's SKIP LOCKED whichever table it looks at first."""
    sid = add_schedule(pg_database)
    url = plain_url(pg_database)
    with pg_database.begin() as conn:
        assert get_by_id(conn, TENANT, sid, for_update=True) is not None
        with psycopg.connect(url, autocommit=True) as other:
            for table in ("schedules", "schedule_state"):
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    other.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR UPDATE NOWAIT", (sid,))
