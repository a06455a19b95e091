"""An item's attempts, written in bulk (store.attempts.add: a multi-row INSERT on SQLite,
COPY text on PostgreSQL), read back exactly as the worker recorded them: errors with
tabs, newlines and backslashes (a traceback, a Windows path), output documents with
nested values, attempts that never started."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.core.attempts import Attempt
from cronplane.store import attempts
from cronplane.store.database import Database
from firing_support import enqueue_items, item_row

TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
JSON_LEAF = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | TEXT
OUTPUT = st.none() | st.dictionaries(
    TEXT,
    st.recursive(
        JSON_LEAF,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(TEXT, c, max_size=3),
        max_leaves=6,
    ),
    max_size=4,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.none() | TEXT,
            OUTPUT,
            st.sampled_from(["succeeded", "failed", "retry", "cancelled"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_attempts_read_back_as_written(
    database: Database, shapes: list[tuple[bool, str | None, object, str]]
) -> None:
    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    row = item_row(now=now)
    enqueue_items(database, [row])
    written = [
        Attempt(
            row["id"],
            n,
            outcome,
            "worker\tone",
            now + timedelta(seconds=n) if started else None,
            now + timedelta(seconds=n, microseconds=250_001),
            error,
            output,  # type: ignore[arg-type]
        )
        for n, (started, error, output, outcome) in enumerate(shapes, start=1)
    ]
    with database.begin() as conn:
        attempts.add(conn, written)
    with database.read() as conn:
        read = attempts.rows_of(conn, row["id"])
    with database.begin() as conn:  # the next example starts from an empty table
        conn.exec_driver_sql("DELETE FROM item_attempts")
        conn.exec_driver_sql("DELETE FROM queue_items")
    assert read == written


def test_an_error_with_a_traceback_and_a_path(database: Database) -> None:
    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    row = item_row(now=now)
    enqueue_items(database, [row])
    error = 'Traceback (most recent call last):\n  File "C:\\jobs\\run.py"\n\tValueError: 50%\\N'
    attempt = Attempt(
        row["id"], 1, "failed", "w", now, now + timedelta(seconds=1), error, {"exit": 1}
    )
    with database.begin() as conn:
        attempts.add(conn, [attempt])
    with database.read() as conn:
        assert attempts.rows_of(conn, row["id"]) == [attempt]
