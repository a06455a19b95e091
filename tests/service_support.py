"""Helpers shared by the service, sync and CLI tests."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select

from cronplane.store.database import Database
from cronplane.store.tables import SCHEDULE_COLUMNS, SCHEDULE_ROWS, events, schedules

START = datetime(2026, 1, 5, 12, 0, 30, tzinfo=UTC)


def counts(database: Database) -> tuple[int, int]:
    """(schedule rows, event rows): what "nothing written" is checked against."""
    with database.read() as conn:
        rows = conn.execute(select(func.count()).select_from(schedules)).scalar_one()
        logged = conn.execute(select(func.count()).select_from(events)).scalar_one()
    return int(rows), int(logged)


def snapshot(database: Database) -> list[tuple[object, ...]]:
    """Every schedule row, as tuples, in key order."""
    with database.read() as conn:
        query = (
            select(*SCHEDULE_COLUMNS)
            .select_from(SCHEDULE_ROWS)
            .order_by(schedules.c.environment, schedules.c.stack, schedules.c.name)
        )
        return [tuple(row) for row in conn.execute(query)]
