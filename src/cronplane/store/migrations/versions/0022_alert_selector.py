"""Alert rules scoped by a label selector (alert_rules.selector, scope 'selector'), and
a job's labels (jobs.labels: a map, {} for none; a job that existed has none)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from cronplane.store.types import JSONDocument

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCOPES_NEW = "scope IN ('schedule', 'job', 'stack', 'tenant', 'selector')"
SCOPES_OLD = "scope IN ('schedule', 'job', 'stack', 'tenant')"
# 0008 named its CHECK in full, and the naming convention prefixed it again.
OLD_NAME = "ck_alert_rules_ck_alert_rules_scope"


def upgrade() -> None:
    # Batch mode: SQLite changes a CHECK by copying the table.
    with op.batch_alter_table("alert_rules") as batch:
        batch.add_column(sa.Column("selector", sa.String(2048), nullable=True))
        batch.drop_constraint(op.f(OLD_NAME), type_="check")
        batch.create_check_constraint("scope", SCOPES_NEW)
    op.add_column(
        "jobs",
        sa.Column("labels", JSONDocument, nullable=False, server_default=sa.text("'{}'")),
    )


def downgrade() -> None:
    # SQLite 3.35+ drops a plain column in place (as 0016 does for schedules.labels).
    op.execute("ALTER TABLE jobs DROP COLUMN labels")
    # A selector rule has no older form: it goes, with its watches and alerts.
    op.execute(
        "DELETE FROM alert_watches WHERE rule_id IN "
        "(SELECT id FROM alert_rules WHERE scope = 'selector')"
    )
    op.execute(
        "DELETE FROM alerts WHERE rule_id IN (SELECT id FROM alert_rules WHERE scope = 'selector')"
    )
    op.execute("DELETE FROM alert_rules WHERE scope = 'selector'")
    with op.batch_alter_table("alert_rules") as batch:
        batch.drop_constraint(op.f("ck_alert_rules_scope"), type_="check")
        batch.create_check_constraint(op.f(OLD_NAME), SCOPES_OLD)
        batch.drop_column("selector")
