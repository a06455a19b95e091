"""A fire's rows filed by schedule after the burst, not in it (SQLite).

`ix_queue_items_schedule` and `ix_events_schedule` answer "did it run, and
if not, why?" and the overlap check. A fire adds one entry per schedule to
each, and keyed by schedule those entries land all over the index. SQLite's
WAL writes every page a transaction dirtied whole, so a burst's commit grew
with the history (the sustained seconds bench's drift). Both indexes lead
with `filed`: SQLite's fire path writes its rows `filed = 0`, into a section
that only holds what waits to be filed (a burst touches a bounded number of
its pages), and the dispatcher files them when it has nothing due
(:func:`file_some`), so the big section's page writes move out of the fire
transaction. PostgreSQL writes pages to its WAL once per checkpoint, not per
commit, and files at once (the column's default).

Readers go through :func:`schedule_is` / :func:`schedule_in`, which name both
sections so each is an index seek.
"""

from __future__ import annotations

from collections.abc import Collection
from uuid import UUID

from sqlalchemy import ColumnElement, Connection, Table

from cronplane.store.tables import events, queue_items

# Rows filed per table and transaction: at most this, and at least the least
# (a chunk's fixed cost is then shared by enough rows).
FILING_CHUNK = 5_000
FILING_MIN_CHUNK = 100
# A chunk is sized to take at most this share of the room before the next fire,
# at the rate the last chunk went (rows of both tables per second), or at the
# assumed rate before one was measured: a third of the slowest seen in
# bench/burst_growth_bench.py (20,000 rows in 0.77 s, at 600,000 items).
FILING_SHARE = 0.5
ASSUMED_FILING_RATE = 8_000.0


def _sections(table: Table) -> ColumnElement[bool]:
    # Both values of the index's first column: the database seeks each section.
    return table.c.filed.in_([False, True])


def schedule_is(table: Table, schedule_id: UUID) -> ColumnElement[bool]:
    """`table.schedule_id = schedule_id`, through the per-schedule index's sections."""
    return _sections(table) & (table.c.schedule_id == schedule_id)


def schedule_in(table: Table, schedule_ids: Collection[UUID]) -> ColumnElement[bool]:
    """`table.schedule_id IN schedule_ids`, through the per-schedule index's sections."""
    return _sections(table) & table.c.schedule_id.in_(list(schedule_ids))


# Oldest first (rowid order): a chunk rewrites the table pages of a few bursts,
# not a few rows of every burst.
_FILE = (
    "UPDATE {table} SET filed = 1 WHERE rowid IN "
    "(SELECT rowid FROM {table} WHERE filed = 0 ORDER BY rowid LIMIT ?)"
)


def chunk_for(room: float, rate: float | None) -> int:
    """Rows per table to file in `room` seconds at `rate` rows/s (None: not measured yet)."""
    rows = (ASSUMED_FILING_RATE if rate is None else rate) * room * FILING_SHARE
    # Two tables, a chunk of each.
    return max(FILING_MIN_CHUNK, min(FILING_CHUNK, int(rows / 2)))


def file_some(conn: Connection, limit: int = FILING_CHUNK) -> int:
    """File up to `limit` unfiled rows of each table (SQLite); how many were filed."""
    done = 0
    for table in (queue_items, events):
        done += conn.exec_driver_sql(_FILE.format(table=table.name), (limit,)).rowcount
    return done
