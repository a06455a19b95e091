"""A claim's rows decoded by hand (store.item_rows) make the same records as SQLAlchemy's
result processing (store.queue.item_from_row): every column, timestamps written in any
zone and read in UTC, with and without microseconds, NULLs, nested JSON, booleans; on
PostgreSQL whatever the session's time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from uuid import uuid4

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select, update

from cronplane.store import claims, dialects, item_rows, queue
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from firing_support import item_row

ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
)
INSTANTS = st.builds(
    lambda at, micro, zone: at.replace(microsecond=micro, tzinfo=UTC).astimezone(zone),
    st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1)),
    st.sampled_from([0, 1, 500_000, 999_999]),
    ZONES,
)
MAYBE = st.none() | INSTANTS
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | TEXT,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(TEXT, c, max_size=3),
    max_leaves=6,
)
ROWS = st.fixed_dictionaries(
    {
        "payload": st.dictionaries(TEXT, JSON, max_size=3),
        "schedule_id": st.none() | st.builds(uuid4),
        "scheduled_for": MAYBE,
        "priority": st.integers(-100, 100),
        "expires_at": MAYBE,
        "timeout": st.none() | st.floats(0.001, 1e6),
        "max_concurrency": st.none() | st.integers(1, 50),
        "exclusive": st.booleans(),
    }
)
LATER = st.fixed_dictionaries(
    {
        "status": st.sampled_from(["queued", "running", "succeeded"]),
        "lease_owner": st.none() | TEXT.map(lambda t: t[:100]),
        "heartbeat_at": MAYBE,
        "lease_expires_at": MAYBE,
        "result": JSON,
        "error": st.none() | TEXT,
        "started_at": MAYBE,
        "finished_at": MAYBE,
        "cancel_requested_at": MAYBE,
        "cancelled_by": st.none() | TEXT.map(lambda t: t[:100]),
    }
)


def _both(database: Database) -> tuple[list[Any], list[Any]]:
    """Every item, through SQLAlchemy's processing and decoded by hand."""
    order = queue_items.c.id
    with database.read() as conn:
        core = [queue.item_from_row(r) for r in conn.execute(select(queue_items).order_by(order))]
        rows = conn.execute(select(*item_rows.COLUMNS).order_by(order))
        return core, dialects.of(conn).decode_items(rows)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(ROWS, LATER, INSTANTS), min_size=1, max_size=4))
def test_decoded_by_hand_as_by_sqlalchemy(
    database: Database, shapes: list[tuple[dict[str, Any], dict[str, Any], datetime]]
) -> None:
    with database.begin() as conn:
        conn.execute(delete(queue_items))
        for values, later, now in shapes:
            row = item_row(now=now, **{k: v for k, v in values.items() if k != "payload"})
            row["payload"] = values["payload"]
            queue.enqueue(conn, row)
            conn.execute(update(queue_items).where(queue_items.c.id == row["id"]).values(later))
    core, by_hand = _both(database)
    assert by_hand == core
    for item in by_hand:
        instants = (item.available_at, item.created_at, item.updated_at, item.started_at)
        assert all(at is None or at.tzinfo is UTC for at in instants)


def test_a_session_in_another_zone_reads_utc(pg_database: Database) -> None:
    at = datetime(2026, 3, 29, 1, 30, 0, 250_000, tzinfo=UTC)
    with pg_database.begin() as conn:
        queue.enqueue(conn, item_row(now=at))
    with pg_database.read() as conn:
        conn.exec_driver_sql("SET LOCAL TIME ZONE 'Asia/Kolkata'")
        (item,) = dialects.of(conn).decode_items(conn.execute(select(*item_rows.COLUMNS)))
    assert item.available_at == at and item.available_at.tzinfo is UTC
    assert item.started_at is None


def test_sqlite_text_with_and_without_microseconds() -> None:
    at = item_rows.sqlite_instant
    assert at("2026-01-05 12:00:00") == datetime(2026, 1, 5, 12, tzinfo=UTC)
    assert at("2026-01-05 12:00:00.000001") == datetime(2026, 1, 5, 12, 0, 0, 1, tzinfo=UTC)
    assert at("2026-01-05 12:00:00.5").tzinfo is UTC
    assert at(None) is None


def test_a_claim_and_a_claim_read_ahead_return_what_core_reads(database: Database) -> None:
    now = datetime(2026, 12, 7, 6, 0, 0, 123_456, tzinfo=UTC)
    rows = [item_row(now=now - timedelta(seconds=n), priority=n % 2) for n in range(5)]
    with database.begin() as conn:
        for row in rows:
            queue.enqueue(conn, row)
    with database.read() as conn:
        ahead = claims.peek(conn, now, 2)
    with database.begin() as conn:
        read = claims.claim_read(conn, "w2", now, timedelta(seconds=60), ahead)
        taken = claims.claim_batch(conn, "w1", now, timedelta(seconds=60), 4)
        again = claims.claim_read(conn, "w3", now, timedelta(seconds=60), ahead)
    core, _ = _both(database)
    by_id = {item.id: item for item in core}
    assert len(read) == 2 and len(taken) == 3 and again == []
    assert [item.id for item in read] == [item.id for item in ahead]
    assert all(item == by_id[item.id] for item in [*read, *taken])
    assert all(item.status == "running" and item.started_at == now for item in taken)
