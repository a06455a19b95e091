"""The dialects' bulk row update (Dialect.update_rows): each row's own values, constant
assignments and a condition the rows share, the keys of the rows it updated; on
PostgreSQL every column goes as one array literal, so text with quotes, backslashes,
commas, braces, spaces or the word NULL must arrive as it was."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select, update

from cronplane.store import dialects
from cronplane.store.database import Database
from cronplane.store.tables import queue_items
from firing_support import enqueue_items, item_row

START = datetime(2026, 12, 7, 7, 0, 0, 1, tzinfo=UTC)
OWNERS = ['a "quoted" one', "back\\slash", "a,b {c}", "NULL", " padded ", "plain"]


@pytest.mark.parametrize("returning", [True, False])
def test_rows_updated_with_their_own_values_where_the_condition_holds(
    database: Database, returning: bool
) -> None:
    rows = [item_row(now=START) for _ in OWNERS]
    enqueue_items(database, rows)
    with database.begin() as conn:
        for row, owner in zip(rows, OWNERS, strict=True):
            conn.execute(
                update(queue_items)
                .where(queue_items.c.id == row["id"])
                .values(lease_owner=owner, status="running")
            )
    with database.begin() as conn:
        dialect = dialects.of(conn)
        enc = dialect.params
        zone = timezone(timedelta(hours=-3))
        values = [
            (enc.datetime((START + timedelta(seconds=n)).astimezone(zone)), enc.uuid(r["id"]), o)
            for n, (r, o) in enumerate(zip(rows, OWNERS, strict=True))
        ]
        values[-1] = (values[-1][0], values[-1][1], "someone else")  # not matched
        found = dialect.update_rows(
            conn,
            queue_items,
            ("id", "lease_owner"),
            "finished_at",
            values,
            extra_set="status = 'succeeded', lease_owner = NULL",
            where="status = 'running'",
            returning=returning,
        )
    expected = {enc.uuid(r["id"]) for r in rows[:-1]}
    assert set(found) == (expected if returning else set())
    with database.read() as conn:
        stored = {
            row.id: row
            for row in conn.execute(
                select(queue_items.c.id, queue_items.c.finished_at, queue_items.c.status)
            )
        }
    for n, row in enumerate(rows[:-1]):
        assert stored[row["id"]].finished_at == START + timedelta(seconds=n)
        assert stored[row["id"]].status == "succeeded"
    assert stored[rows[-1]["id"]].status == "running"
