"""Migration 0019 (pause_missed) (issue 36): schedules.paused_missed, added and dropped."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import inspect

from cronplane.store.database import Database, alembic_config


def _columns(database: Database) -> set[str]:
    return {column["name"] for column in inspect(database.engine).get_columns("schedules")}


def test_0019_adds_paused_missed_and_back(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'pause.db'}")
    database.upgrade("0018")
    assert "paused_missed" not in _columns(database)
    database.upgrade()
    assert "paused_missed" in _columns(database)
    with database.begin() as conn:
        command.downgrade(alembic_config(conn), "0018")
    assert "paused_missed" not in _columns(database) and "paused_by" in _columns(database)
    database.upgrade()
    assert database.current_revision() == database.head_revision()
