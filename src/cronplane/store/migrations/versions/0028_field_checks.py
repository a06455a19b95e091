"""Every schedule field's column keeps to its domain: the CHECKs later fields lacked

The `schedules` table's field columns and their CHECKs now come from the field
table (store.tables.field_columns): a whole number's minimum, a choice's
values. The fields added after 0001 without one get theirs here: jitter,
dst_gap, dst_repeat, on_excluded (the conditions as of this revision).

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHECKS = {
    "jitter": "jitter IS NULL OR jitter >= 0",
    "dst_gap": "dst_gap IN ('shift', 'skip', 'later')",
    "dst_repeat": "dst_repeat IS NULL OR dst_repeat IN ('first', 'both', 'second')",
    "on_excluded": "on_excluded IN ('skip', 'previous', 'next')",
}


def upgrade() -> None:
    # As in 0006: SQLite cannot add a CHECK to an existing table without
    # rebuilding it (and its partial indexes); there the service's validation
    # (core.fields) is the check.
    if op.get_context().dialect.name == "postgresql":
        for name, condition in CHECKS.items():
            op.create_check_constraint(op.f(f"ck_schedules_{name}"), "schedules", condition)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for name in CHECKS:
            op.drop_constraint(op.f(f"ck_schedules_{name}"), "schedules", type_="check")
