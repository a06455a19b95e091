"""Each schedule's set of label keys (issue 37): schedule_key_sets, label_key_sets, filled

A selector of negative terms only (`!team`) walks the rows of the key sets
without the key (store.key_sets), by ix_schedule_key_sets_walk (tenant,
key_set, name, stack, environment, schedule_id: a set's rows in the listing's
order, covering). The store writes a row's set with its labels
(store.label_index); this fills them for the rows that exist: each database's
JSON walk lists a row's keys, and the digest of each distinct list is taken
here, once (`digest`, frozen: store.key_sets.digest as of this revision).

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A row's keys, comma-separated, in the order its database's JSON walk yields them
# (the same for the same row each time; sorted by `digest`).
KEYS = {
    "postgresql": "COALESCE((SELECT string_agg(k, ',') FROM jsonb_object_keys(s.labels) AS k), '')",
    "sqlite": "COALESCE((SELECT group_concat(key, ',') FROM json_each(s.labels)), '')",
}


def digest(listed: str) -> tuple[str, str]:
    """(digest, keys sorted and comma-separated) of comma-separated keys."""
    text = ",".join(sorted(key for key in listed.split(",") if key))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest(), text


def fill(conn: sa.Connection) -> None:
    """Each schedule's key set, and each tenant's sets, from `schedules.labels`: the
    distinct lists of keys are digested here, then joined back in one INSERT."""
    keys = KEYS[conn.dialect.name]
    found = conn.execute(sa.text(f"SELECT DISTINCT s.tenant, {keys} FROM schedules AS s")).all()
    conn.execute(
        sa.text("CREATE TEMPORARY TABLE st_key_set_lists (tenant TEXT, listed TEXT, key_set TEXT)")
    )
    conn.execute(sa.text("CREATE INDEX st_key_set_lists_key ON st_key_set_lists (tenant, listed)"))
    lists = [{"t": tenant, "l": listed, "k": digest(listed)[0]} for tenant, listed in found]
    if lists:
        conn.execute(sa.text("INSERT INTO st_key_set_lists VALUES (:t, :l, :k)"), lists)
    sets = {(tenant, *digest(listed)) for tenant, listed in found}
    if sets:
        conn.execute(
            sa.text("INSERT INTO label_key_sets (tenant, key_set, key_list) VALUES (:t, :k, :s)"),
            [{"t": tenant, "k": key_set, "s": text} for tenant, key_set, text in sorted(sets)],
        )
    conn.execute(
        sa.text(
            "INSERT INTO schedule_key_sets "
            "(schedule_id, tenant, key_set, name, stack, environment) "
            "SELECT s.id, s.tenant, l.key_set, s.name, s.stack, s.environment "
            f"FROM schedules AS s JOIN st_key_set_lists AS l "
            f"ON l.tenant = s.tenant AND l.listed = {keys}"
        )
    )
    conn.execute(sa.text("DROP TABLE st_key_set_lists"))


def upgrade() -> None:
    op.create_table(
        "schedule_key_sets",
        sa.Column("schedule_id", sa.Uuid(), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("key_set", sa.String(32), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("stack", sa.String(64), nullable=False),
        sa.Column("environment", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("schedule_id", name="pk_schedule_key_sets"),
    )
    op.create_table(
        "label_key_sets",
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("key_set", sa.String(32), nullable=False),
        sa.Column("key_list", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "key_set", name="pk_label_key_sets"),
    )
    conn = op.get_bind()
    fill(conn)
    op.create_index(
        "ix_schedule_key_sets_walk",
        "schedule_key_sets",
        ["tenant", "key_set", "name", "stack", "environment", "schedule_id"],
    )
    if conn.dialect.name == "postgresql":
        # The first pages after the upgrade plan with these rows counted (autovacuum may be
        # off, or a minute away).
        op.execute("ANALYZE schedule_key_sets")
        op.execute("ANALYZE label_key_sets")


def downgrade() -> None:
    op.drop_table("label_key_sets")
    op.drop_table("schedule_key_sets")
