"""A fire's rows filed by schedule after the burst (store.filing, issue 16).

On SQLite a fire writes its items and ledger rows unfiled (the small section
of the per-schedule indexes) and the dispatcher files them in the room
before the next fire, a chunk sized to it; PostgreSQL files at once. What a user sees
of a schedule — its runs, its ledger page by page, its last outcome, whether
it ever fired, its overlap rule — must not depend on which rows are filed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, select, update

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.processes import fire_rounds as rounds_module
from cronplane.processes.dispatcher import Dispatcher
from cronplane.processes.fire_rounds import FILING_MIN_ROOM
from cronplane.store import cancels, summaries
from cronplane.store.database import Database
from cronplane.store.events import list_events
from cronplane.store.filing import (
    ASSUMED_FILING_RATE,
    FILING_CHUNK,
    FILING_MIN_CHUNK,
    FILING_SHARE,
    chunk_for,
    file_some,
)
from cronplane.store.queue import list_items
from cronplane.store.tables import events, queue_items
from firing_support import (
    START,
    add_job,
    add_schedule,
    dispatcher,
    empty_firing_tables,
    enqueue_items,
    item_row,
    items,
    ledger,
)

TICKS = 5


def _unfiled(database: Database) -> dict[str, int]:
    with database.read() as conn:
        return {
            table.name: len(conn.execute(select(table.c.id).where(~table.c.filed)).all())
            for table in (queue_items, events)
        }


def _fire_minutes(database: Database, clock: FakeClock, count: int) -> list[UUID]:
    """Three schedules (allow, skip, allow) fired `count` minutes, nothing filed by hand."""
    add_job(database)
    ids = [
        add_schedule(database, "a", overlap="allow"),
        add_schedule(database, "b", overlap="skip"),
        add_schedule(database, "c", overlap="allow", enabled=False),
    ]
    d = dispatcher(database, clock)
    for _ in range(count):
        clock.advance(60)
        d.tick()
    return ids


def _pages(conn: Connection, schedule_id: UUID, size: int, **filters: Any) -> list[int]:
    """A schedule's ledger walked newest first, `size` at a time (the API's keyset)."""
    seen: list[int] = []
    before = None
    while True:
        page = list_events(
            conn, tenant="acme", schedule_id=schedule_id, before_id=before, limit=size, **filters
        )
        seen.extend(event.id for event in page)
        if len(page) < size:
            return seen
        before = page[-1].id


def _what_users_see(database: Database, ids: list[UUID]) -> dict[str, Any]:
    with database.read() as conn:
        latest = summaries.latest_by_schedule(conn, "acme", ids)
        return {
            "runs": [
                [item.id for item in list_items(conn, tenant="acme", schedule_id=sid, limit=limit)]
                for sid in ids
                for limit in (2, 100)
            ],
            "ledger": [_pages(conn, sid, size) for sid in ids for size in (1, 3, 100)],
            "fired ledger": [_pages(conn, sid, 2, codes=[ev.SCHEDULE_FIRED.text]) for sid in ids],
            "latest": {sid: item.id for sid, item in latest.items()},
            "ever fired": summaries.fired_schedules(conn, "acme", ids, ev.SCHEDULE_FIRED.text),
        }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(unfile=st.lists(st.booleans(), min_size=2 * 3 * TICKS, max_size=2 * 3 * TICKS))
def test_what_a_schedule_shows_does_not_depend_on_which_rows_are_filed(
    database: Database, unfile: list[bool]
) -> None:
    empty_firing_tables(database)
    ids = _fire_minutes(database, FakeClock(START - timedelta(seconds=30)), TICKS)
    with database.begin() as conn:
        conn.execute(update(queue_items).values(filed=True))
        conn.execute(update(events).values(filed=True))
    all_filed = _what_users_see(database, ids)
    assert len(all_filed["runs"][0]) == 2 and len(all_filed["ledger"][0]) == TICKS
    # Any mix of the two sections, and every row unfiled: the same answers.
    with database.begin() as conn:
        for table in (queue_items, events):
            rows = conn.execute(select(table.c.id).order_by(table.c.id)).scalars().all()
            chosen = [row for row, flag in zip(rows, unfile, strict=False) if flag]
            conn.execute(update(table).where(table.c.id.in_(chosen)).values(filed=False))
    assert _what_users_see(database, ids) == all_filed
    with database.begin() as conn:
        conn.execute(update(queue_items).values(filed=False))
        conn.execute(update(events).values(filed=False))
    assert _what_users_see(database, ids) == all_filed


def test_overlap_skip_and_cancels_see_an_unfiled_item(database: Database) -> None:
    clock = FakeClock(START - timedelta(seconds=30))
    add_job(database)
    skip = add_schedule(database, "b", overlap="skip")
    d = dispatcher(database, clock, fire_ahead=0.0)
    clock.advance(60)
    d.tick()
    with database.begin() as conn:
        conn.execute(update(queue_items).values(filed=False))
    clock.advance(60)
    d.tick()
    codes = [row.code for row in ledger(database, skip)]
    assert codes == [ev.SCHEDULE_FIRED.text, ev.SKIPPED_OVERLAP.text]
    with database.begin() as conn:
        cancelled = cancels.cancel_schedules(conn, [skip], actor="ops", now=clock.now())
    assert [item.status for item in cancelled] == ["cancelled"]


def test_sqlite_fires_unfiled_and_the_dispatcher_files_between_bursts(
    sqlite_database: Database,
) -> None:
    database = sqlite_database
    clock = FakeClock(START - timedelta(seconds=30))
    add_job(database)
    sid = add_schedule(database, "a", overlap="allow", next_run=START + timedelta(minutes=1))
    d = dispatcher(database, clock, fire_ahead=0.0, max_sleep=30.0)
    clock.set(START + timedelta(minutes=1) - timedelta(seconds=FILING_MIN_ROOM / 2))
    assert d.tick().filed == 0  # the lease; the fire is too close: no filing
    clock.set(START + timedelta(minutes=1))
    report = d.tick()
    # The fire wrote its rows unfiled, and the same tick, a minute from the next
    # fire, filed them after the commit.
    assert report.fired == 1 and report.filed == 2
    assert _unfiled(database) == {"queue_items": 0, "events": 0}
    assert len(items(database, sid)) == 1
    # Just before the next fire nothing is filed (a chunk must not delay it).
    with database.begin() as conn:
        conn.execute(update(queue_items).values(filed=False))
    clock.set(START + timedelta(minutes=2) - timedelta(seconds=FILING_MIN_ROOM / 2))
    assert d.tick().filed == 0
    assert _unfiled(database)["queue_items"] == 1


def test_sqlite_files_a_large_backlog_a_chunk_per_tick(sqlite_database: Database) -> None:
    database = sqlite_database
    clock = FakeClock(START)
    add_job(database)
    sid = add_schedule(database, "a", overlap="allow")
    d = dispatcher(database, clock, fire_ahead=0.0, max_sleep=30.0)
    d.tick()
    _unfiled_events(database, sid, FILING_CHUNK + 10)
    first = d.tick()
    # A full chunk: more may wait, so the dispatcher ticks again at once.
    assert first.filed == FILING_CHUNK and first.sleep == 0.0
    second = d.tick()
    assert second.filed == 10 and second.sleep > 0
    assert _unfiled(database) == {"queue_items": 0, "events": 0}


@pytest.mark.postgres
def test_postgresql_files_at_once(pg_database: Database) -> None:
    clock = FakeClock(START - timedelta(seconds=30))
    _fire_minutes(pg_database, clock, 2)
    assert _unfiled(pg_database) == {"queue_items": 0, "events": 0}
    assert len(items(pg_database)) == 3  # a twice, b once (then skipped: its item waits)


def _leader_with_one_schedule(
    database: Database, next_run: datetime
) -> tuple[FakeClock, Dispatcher, UUID]:
    """A leading dispatcher (no fire-ahead) at START, one schedule due at `next_run`."""
    clock = FakeClock(START)
    add_job(database)
    sid = add_schedule(database, "a", overlap="allow", next_run=next_run)
    d = dispatcher(database, clock, fire_ahead=0.0, max_sleep=30.0)
    d.tick()  # the lease
    return clock, d, sid


def test_the_sleep_after_filing_still_ends_at_the_next_fire(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = sqlite_database
    clock, d, _ = _leader_with_one_schedule(database, START + timedelta(seconds=2))
    enqueue_items(database, [item_row(now=START)])
    with database.begin() as conn:
        conn.execute(update(queue_items).values(filed=False))

    def slow_filing(conn: Connection, limit: int) -> int:
        clock.advance(0.3)
        return file_some(conn, limit)

    monkeypatch.setattr(rounds_module, "file_some", slow_filing)
    report = d.tick()
    assert report.filed == 1
    # Two seconds to the fire, of which the filing took 0.3: it sleeps the rest.
    assert clock.now() == START + timedelta(seconds=0.3)
    assert report.sleep == pytest.approx(2.0 - 0.3)


@given(
    room=st.floats(min_value=0, max_value=3_600),
    more=st.floats(min_value=0, max_value=3_600),
    rate=st.none() | st.floats(min_value=1, max_value=1e7),
)
def test_a_chunk_is_bounded_and_grows_with_the_room(
    room: float, more: float, rate: float | None
) -> None:
    chunk = chunk_for(room, rate)
    assert FILING_MIN_CHUNK <= chunk <= FILING_CHUNK
    assert chunk_for(room + more, rate) >= chunk
    # Above the least chunk, filing both tables' chunks at `rate` fits its share of the room.
    if chunk > FILING_MIN_CHUNK:
        assert 2 * chunk / (rate or ASSUMED_FILING_RATE) <= FILING_SHARE * room + 1e-9


def _unfiled_events(database: Database, sid: UUID, count: int) -> None:
    with database.begin() as conn:
        conn.exec_driver_sql(
            "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?) "
            "INSERT INTO events (code, tenant, schedule_id, actor, message, created_at, detail, "
            "filed) SELECT 'V200100FIRED', 'acme', ?, 'x', 'm', '2026-01-01', '{}', 0 FROM n",
            (count, sid.hex),
        )


def test_a_slow_filing_makes_the_next_chunk_smaller_and_the_fire_stays_on_time(
    sqlite_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = sqlite_database
    fire = START + timedelta(seconds=10)
    clock, d, sid = _leader_with_one_schedule(database, fire)
    _unfiled_events(database, sid, 6_000)
    limits: list[int] = []

    def slow_filing(conn: Connection, limit: int) -> int:
        limits.append(limit)
        filed = file_some(conn, limit)
        clock.advance(filed / 1_000)  # a machine filing 1,000 rows a second
        return filed

    monkeypatch.setattr(rounds_module, "file_some", slow_filing)
    reports = []
    while clock.now() < fire and (not reports or reports[-1].sleep == 0):
        reports.append(d.tick())
    # The first chunk goes at the assumed rate (capped); it took 5 s of the
    # 10. The next is sized to half the 5 s left at the rate measured:
    # 1,000 rows a second, both tables together.
    assert limits[0] == FILING_CHUNK
    assert limits[1] == int(1_000 * 5.0 * FILING_SHARE / 2)
    assert clock.now() <= fire
    # Then the dispatcher sleeps until the fire and fires on time.
    clock.set(fire)
    assert d.tick().fired == 1


def test_a_schedule_every_second_is_filed_between_its_fires(sqlite_database: Database) -> None:
    database = sqlite_database
    clock = FakeClock(START)
    add_job(database)
    sid = add_schedule(database, "every-second", cron="@every 1s", overlap="allow")
    d = dispatcher(database, clock, fire_ahead=0.25, max_sleep=30.0)
    for _ in range(5):
        report = d.tick()
        clock.advance(report.sleep)
    assert len(items(database, sid)) >= 4
    # Each fire's rows were filed in the three quarters of a second after it.
    assert _unfiled(database) == {"queue_items": 0, "events": 0}
