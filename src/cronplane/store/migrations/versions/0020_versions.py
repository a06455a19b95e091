"""Schedule versions (issue 38): schedule_versions, and a version 1 of every row

Every definition change writes a version from here on (store.versions). Rows
that exist get their version 1 now, from their current definition, written
by `migration` via `system`, at the row's updated_at: so every row has a
version to diff and roll back to from the first day (not lazily at its
first edit). The columns read are the ones this revision knows, frozen here.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The definition as of this revision: core.versions.DEFINITION_FIELDS then.
_FIELDS = (
    "job", "cron", "timezone", "payload", "misfire_grace", "overlap", "timeout", "jitter",
    "start_at", "end_at", "max_runs", "dst_gap", "dst_repeat", "labels", "exclude",
    "on_excluded", "enabled", "paused_at", "paused_until", "paused_note", "paused_by",
    "paused_missed", "source", "overrides",
)  # fmt: skip
_INSTANTS = ("start_at", "end_at", "paused_at", "paused_until")
_JSON = ("payload", "labels", "exclude", "overrides")


def _frozen() -> tuple[sa.Table, sa.Table]:
    meta = sa.MetaData()
    columns: list[sa.Column[Any]] = [
        sa.Column(
            name, UTCDateTime if name in _INSTANTS else JSONDocument if name in _JSON else sa.String
        )
        for name in _FIELDS
        if name != "enabled"
    ]
    rows = sa.Table(
        "schedules",
        meta,
        sa.Column("id", sa.Uuid),
        *(sa.Column(n, sa.String) for n in ("tenant", "stack", "environment", "name")),
        sa.Column("updated_at", UTCDateTime),
        *columns,
    )
    state = sa.Table(
        "schedule_state", meta, sa.Column("id", sa.Uuid), sa.Column("enabled", sa.Boolean)
    )
    return rows, state


def _value(name: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if name == "overrides":
        return sorted(value or ())
    if name in ("misfire_grace", "timeout", "jitter", "max_runs") and value is not None:
        return int(value)
    return value


def upgrade() -> None:
    versions = op.create_table(
        "schedule_versions",
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("stack", sa.String(64), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("definition", JSONDocument, nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("via", sa.String(16), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("digest", sa.String(80), nullable=True),
        sa.Column("app_version", sa.String(64), nullable=True),
        sa.Column("removed", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("schedule_id", "number", name="pk_schedule_versions"),
    )
    op.create_index(
        "ix_schedule_versions_key",
        "schedule_versions",
        ["tenant", "stack", "environment", "name", "at"],
    )
    op.create_index("ix_schedule_versions_at", "schedule_versions", ["at"])
    rows, state = _frozen()
    query = sa.select(rows, state.c.enabled).join(state, state.c.id == rows.c.id)
    conn = op.get_bind()
    batch: list[dict[str, Any]] = []
    for row in conn.execute(query):
        m = row._mapping
        batch.append(
            {
                "schedule_id": m["id"],
                "number": 1,
                **{key: m[key] for key in ("tenant", "stack", "environment", "name")},
                "definition": {name: _value(name, m[name]) for name in _FIELDS},
                "actor": "migration",
                "via": "system",
                "at": m["updated_at"],
            }
        )
        if len(batch) == 1000:
            conn.execute(versions.insert(), batch)
            batch = []
    if batch:
        conn.execute(versions.insert(), batch)


def downgrade() -> None:
    op.drop_table("schedule_versions")
