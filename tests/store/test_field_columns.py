"""The schedules table's field columns and CHECKs come from the field table, and the
migrated databases keep them: what a new plain field no longer writes in `store/`."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from sqlalchemy import String, inspect
from sqlalchemy.exc import IntegrityError

from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.schedule_field import ScheduleField
from cronplane.store import schedules as schedule_store
from cronplane.store.database import Database
from cronplane.store.tables import field_columns as columns
from cronplane.store.tables import schedules
from table_support import bare_schedule

CHECKED = [row for row in SCHEDULE_FIELDS if columns.check_condition(row) is not None]


def test_every_field_but_the_state_is_a_column_of_schedules_by_its_row() -> None:
    for row in SCHEDULE_FIELDS:
        if row.name == "enabled":  # schedule_state's
            assert row.name not in schedules.c
            continue
        column = schedules.c[row.name]
        assert column.nullable == row.stores_null, row.name
    # Every whole number with a minimum and every choice; no text, map or instant.
    assert {"misfire_grace", "jitter", "timeout", "overlap", "dst_gap", "on_excluded"} <= {
        row.name for row in CHECKED
    }
    assert not {"job", "cron", "payload", "labels", "start_at"} & {row.name for row in CHECKED}


def test_a_planted_row_becomes_a_column_with_its_check_and_older_rows_default() -> None:
    """A new field's column and CHECK, with no line in store/: its kind decides."""
    priority = ScheduleField("priority", "Priority", "count", minimum=0, maximum=9, since=True)
    tier = ScheduleField(
        "tier", "Tier", "choice", default="standard", choices=("standard", "express"), since=True
    )
    assert columns.check_condition(priority) == "priority IS NULL OR priority >= 0"
    assert columns.check_condition(tier) == "tier IN ('standard', 'express')"
    (tier_column,) = columns.field_columns((tier,))  # 8 letters at most: fits 8
    assert isinstance(tier_column.type, String) and tier_column.type.length == 8
    assert tier_column.server_default is not None
    assert not tier_column.nullable


def test_the_migrated_database_holds_the_tables_checks(database: Database) -> None:
    """PostgreSQL holds every CHECK the table names; SQLite those its table was
    created with (it cannot add one to a table without rebuilding it: 0006, 0028)."""
    with database.engine.connect() as conn:
        found = {c["name"] for c in inspect(conn).get_check_constraints("schedules")}
    named = {f"ck_schedules_{row.name}" for row in CHECKED} | {"ck_schedules_source"}
    assert found <= named
    if database.engine.dialect.name == "postgresql":
        assert found == named


@pytest.mark.postgres
@pytest.mark.parametrize("row", CHECKED, ids=lambda row: row.name)
def test_postgresql_refuses_a_value_outside_a_fields_domain(
    pg_database: Database, row: ScheduleField
) -> None:
    """Below a whole number's minimum, or not one of a choice's values: the
    database refuses it even when written past the service."""
    with pg_database.engine.begin() as conn:
        schedule_id = _one_row(conn)
    bad: object = row.minimum - 1 if row.minimum is not None else "bogus"
    with pytest.raises(IntegrityError), pg_database.engine.begin() as conn:
        conn.execute(_set(schedule_id, **{row.name: bad}))


def _one_row(conn: Any) -> UUID:
    row = bare_schedule()
    schedule_store.insert_rows(conn, [schedule_store.schedule_values(row)])
    return row.id


def test_0028_stops_at_a_row_outside_a_domain_and_changes_nothing(
    empty_database: Database,
) -> None:
    """A value written past the service stops the upgrade on PostgreSQL, naming the
    CHECK, and the database stays at 0027; SQLite adds no CHECK and upgrades."""
    database = empty_database
    database.upgrade("0027")
    with database.begin() as conn:
        schedule_id = _one_row(conn)
        conn.execute(_set(schedule_id, dst_repeat="twice"))
    if database.engine.dialect.name != "postgresql":
        database.upgrade()
        assert database.is_current()
        return
    with pytest.raises(IntegrityError, match="ck_schedules_dst_repeat"):
        database.upgrade()
    assert database.current_revision() == "0027"
    with database.begin() as conn:
        conn.execute(_set(schedule_id, dst_repeat="second"))
    database.upgrade()
    assert database.is_current()


def _set(schedule_id: UUID, **values: object) -> Any:
    """An UPDATE of one row's columns, past the service and its checks."""
    return schedules.update().where(schedules.c.id == schedule_id).values(**values)
