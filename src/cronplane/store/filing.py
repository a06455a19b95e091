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

# Rows filed per statement: bounded, so a chunk ends well before the next burst.
FILING_CHUNK = 5_000


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


def file_some(conn: Connection, limit: int = FILING_CHUNK) -> int:
    """File up to `limit` unfiled rows of each table (SQLite); how many were filed."""
    done = 0
    for table in (queue_items, events):
        done += conn.exec_driver_sql(_FILE.format(table=table.name), (limit,)).rowcount
    return done
