"""Job versions (issue 38): job_versions, and a version 1 of every job

Every change of a job's definition writes a version from here on
(store.job_versions). Jobs that exist get their version 1 now, from their
current definition, written by `migration` via `system`, at the job's
updated_at (as 0020 did for schedules). The columns read are the ones this
revision knows, frozen here.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument, UTCDateTime

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The definition as of this revision: core.job_versions.JOB_DEFINITION_FIELDS then.
_FIELDS = (
    "title", "target", "kind", "payload", "payload_schema", "options", "status", "labels",
    "source",
)  # fmt: skip
_JSON = ("payload", "payload_schema", "options", "labels")


def _frozen() -> sa.Table:
    return sa.Table(
        "jobs",
        sa.MetaData(),
        sa.Column("id", sa.Uuid),
        *(sa.Column(n, sa.String) for n in ("tenant", "stack", "name")),
        sa.Column("updated_at", UTCDateTime),
        *(sa.Column(n, JSONDocument if n in _JSON else sa.String) for n in _FIELDS),
    )


def upgrade() -> None:
    versions = op.create_table(
        "job_versions",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("stack", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("definition", JSONDocument, nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("via", sa.String(16), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("digest", sa.String(80), nullable=True),
        sa.Column("app_version", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("job_id", "number", name="pk_job_versions"),
    )
    op.create_index("ix_job_versions_at", "job_versions", ["at"])
    conn = op.get_bind()
    batch: list[dict[str, Any]] = []
    for row in conn.execute(sa.select(_frozen())):
        m = row._mapping
        default: dict[str, Any] = {"labels": {}, "payload": {}, "options": {}}
        batch.append(
            {
                "job_id": m["id"],
                "number": 1,
                **{key: m[key] for key in ("tenant", "stack", "name")},
                "definition": {
                    name: default.get(name) if m[name] is None else m[name] for name in _FIELDS
                },
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
    op.drop_table("job_versions")
