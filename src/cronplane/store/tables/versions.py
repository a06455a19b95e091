"""Schedule versions (issue 38; migration 0020): one row per definition change of a row.

Keyed by (schedule_id, number): the numbers of a row run 1, 2, 3, … with no
gap, and the key refuses a duplicate, so two editors can never both write
version n (the second's transaction fails, or, as every writer first takes
the row's lock, waits and then counts on). The row's key (tenant, stack,
environment, name) is copied so a deleted row's versions are still found by
name (`schedule restore`): ix_schedule_versions_key. `at` is indexed for
housekeeping's prune.

`job_versions` (migration 0025) holds a job's versions the same way, keyed
(job_id, number).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Uuid,
    false,
)

from cronplane.store.tables.base import metadata
from cronplane.store.types import JSONDocument, UTCDateTime

schedule_versions = Table(
    "schedule_versions",
    metadata,
    Column("schedule_id", Uuid, nullable=False),
    Column("number", Integer, nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("definition", JSONDocument, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("via", String(16), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("reason", String(500), nullable=True),
    Column("digest", String(80), nullable=True),
    Column("app_version", String(64), nullable=True),
    # This change deleted the row; the definition is the last it had.
    Column("removed", Boolean, nullable=False, server_default=false()),
    PrimaryKeyConstraint("schedule_id", "number", name="pk_schedule_versions"),
)
Index(
    "ix_schedule_versions_key",
    schedule_versions.c.tenant,
    schedule_versions.c.stack,
    schedule_versions.c.environment,
    schedule_versions.c.name,
    schedule_versions.c.at,
)
Index("ix_schedule_versions_at", schedule_versions.c.at)

# Job versions (issue 38; migration 0025): the same record for a job, in a table of
# its own — a job has no environment, its key is (tenant, stack, name), and it is never
# deleted (deactivated instead), so no `removed`; its versions are found by its id.
job_versions = Table(
    "job_versions",
    metadata,
    Column("job_id", Uuid, nullable=False),
    Column("number", Integer, nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("definition", JSONDocument, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("via", String(16), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("reason", String(500), nullable=True),
    Column("digest", String(80), nullable=True),
    Column("app_version", String(64), nullable=True),
    PrimaryKeyConstraint("job_id", "number", name="pk_job_versions"),
)
Index("ix_job_versions_at", job_versions.c.at)
