"""The label index (issue 37; migration 0018): one row per label of a schedule.

`schedules.labels` is the row's map as written; this table holds the same
pairs one per row so a selector is answered by an index, not by reading a
million JSON documents. The store writes both in the same statement group on
every path that changes labels (store.label_index). Keyed by (schedule_id,
key) for a row's probe and its delete. Each row also carries its schedule's
listing key (name, stack, environment, which never change): so
`ix_schedule_labels_select` (tenant, key, value, name, stack, environment,
schedule_id: covering) yields the rows with a label value already in the
listing's order, and a page of `team=payments` out of a million is a range
of 100 index entries, not a sort of every match.

A row lacking a label has no entry here, so the rows a negative term selects
(`!team`) are told apart by their set of keys (migration 0027;
store.key_sets says why): `schedule_key_sets`, one row per schedule naming its
set by a digest, with the listing key (`ix_schedule_key_sets_walk` yields a
set's rows in the listing's order), and `label_key_sets`, each tenant's sets
and their keys, written once and never deleted.
"""

from __future__ import annotations

from sqlalchemy import Column, Index, PrimaryKeyConstraint, String, Table, Text, Uuid

from cronplane.store.tables.base import metadata

schedule_labels = Table(
    "schedule_labels",
    metadata,
    Column("schedule_id", Uuid, nullable=False),
    Column("tenant", String(64), nullable=False),
    # A prefix (<= 63), '/', a name (<= 63): core.labels.
    Column("key", String(128), nullable=False),
    Column("value", String(63), nullable=False),
    Column("name", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    PrimaryKeyConstraint("schedule_id", "key", name="pk_schedule_labels"),
)
Index(
    "ix_schedule_labels_select",
    schedule_labels.c.tenant,
    schedule_labels.c.key,
    schedule_labels.c.value,
    schedule_labels.c.name,
    schedule_labels.c.stack,
    schedule_labels.c.environment,
    schedule_labels.c.schedule_id,
)

# A set of keys by its digest (store.key_sets.digest: 32 hex digits).
DIGEST = 32

schedule_key_sets = Table(
    "schedule_key_sets",
    metadata,
    Column("schedule_id", Uuid, nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("key_set", String(DIGEST), nullable=False),
    Column("name", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    PrimaryKeyConstraint("schedule_id", name="pk_schedule_key_sets"),
)
Index(
    "ix_schedule_key_sets_walk",
    schedule_key_sets.c.tenant,
    schedule_key_sets.c.key_set,
    schedule_key_sets.c.name,
    schedule_key_sets.c.stack,
    schedule_key_sets.c.environment,
    schedule_key_sets.c.schedule_id,
)

label_key_sets = Table(
    "label_key_sets",
    metadata,
    Column("tenant", String(64), nullable=False),
    Column("key_set", String(DIGEST), nullable=False),
    # The keys, sorted, comma-separated (a key has no comma: core.labels); "" for none.
    Column("key_list", Text, nullable=False),
    PrimaryKeyConstraint("tenant", "key_set", name="pk_label_key_sets"),
)
