"""Schedules, their fire state, jobs and the event ledger."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    text,
    true,
)

from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.store.tables.base import EventId, metadata
from cronplane.store.tables.field_columns import field_checks, field_columns
from cronplane.store.types import JSONDocument, UTCDateTime

# The schedule's state, in a table of its own (schedule_state, below).
STATE_FIELDS = ("enabled", "next_run", "last_run", "run_count")
# The field table's rows stored in `schedules`: all but `enabled` (schedule_state's).
_FIELD_ROWS = tuple(row for row in SCHEDULE_FIELDS if row.name not in STATE_FIELDS)

schedules = Table(
    "schedules",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("environment", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("source", String(8), nullable=False),
    # Every settable field (core.fields), by its row: job, cron, timezone, payload,
    # misfire grace, jitter, overlap, timeout, the window and run limit, the DST
    # policy, labels, the excluded calendars.
    *field_columns(_FIELD_ROWS),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("revision", Integer, nullable=False),
    # For `app` rows: the manifest's last declaration, and the fields an
    # operator changed since (sync leaves those alone and reports drift).
    Column("declared", JSONDocument, nullable=True),
    Column("overrides", JSONDocument, nullable=False),
    # The offset jitter applies to next_run (docs/controls.md).
    Column("jitter_offset", Integer, nullable=False, server_default=text("0")),
    # An operator's pause: set by pause, cleared by resume or by the fire path.
    Column("paused_at", UTCDateTime, nullable=True),
    Column("paused_until", UTCDateTime, nullable=True),
    Column("paused_note", String(500), nullable=True),
    Column("paused_by", String(128), nullable=True),
    # What the pause's own end (at paused_until) enqueues of what it passed (migration 0020).
    Column("paused_missed", String(8), nullable=True),
    UniqueConstraint("tenant", "stack", "environment", "name", name="uq_schedules_key"),
    CheckConstraint("source IN ('app', 'user', 'system')", name="source"),
    *field_checks(_FIELD_ROWS),
)

# Paused rows only (the alert evaluator's "paused past a limit"): costs nothing for the rest.
Index(
    "ix_schedules_paused",
    schedules.c.paused_at,
    postgresql_where=text("paused_at IS NOT NULL"),
    sqlite_where=text("paused_at IS NOT NULL"),
)
# Listing by job within a scope (filters + keyset paging on name).
Index("ix_schedules_job", schedules.c.tenant, schedules.c.job, schedules.c.name)
# Listing a whole tenant (any stack and environment) in the listing's order,
# so a page is an index range scan instead of a sort of every tenant row.
Index(
    "ix_schedules_tenant_name",
    schedules.c.tenant,
    schedules.c.name,
    schedules.c.stack,
    schedules.c.environment,
)

# What a fire writes of a schedule (migration 0014): the enabled flag, when it
# is due, when it last fired and how often. A narrow table of its own because
# next_run is indexed, so its UPDATE is never HOT: on `schedules` it wrote an
# entry into every index (three wide text ones among them); here it writes
# the two due indexes and the key, all narrow. One row per schedule, same id;
# `tenant` is the schedule's (it never changes), copied for the fair index.
schedule_state = Table(
    "schedule_state",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("next_run", UTCDateTime, nullable=True),
    Column("last_run", UTCDateTime, nullable=True),
    # Counts fires (max_runs ends the row, core.firing; migration 0006).
    Column("run_count", Integer, nullable=False, server_default=text("0")),
)
# Due work: the dispatcher's only scan. Partial on enabled, so disabled rows cost nothing.
Index(
    "ix_schedule_state_due",
    schedule_state.c.next_run,
    postgresql_where=text("enabled"),
    sqlite_where=text("enabled = 1"),
)
# Fair dispatch (store.dispatch.fair): the tenants with due rows by a skip
# scan, then each tenant's earliest due rows. No id: on SQLite the rowid
# orders ties (and a fire's update of next_run rewrites a smaller entry: with
# the id, this index cost a 10,000-row burst 14 %, without it 4 %).
Index(
    "ix_schedule_state_tenant_due",
    schedule_state.c.tenant,
    schedule_state.c.next_run,
    postgresql_where=text("enabled"),
    sqlite_where=text("enabled = 1"),
)
# A schedule as one row: every read of a whole schedule selects SCHEDULE_COLUMNS
# from SCHEDULE_ROWS (store.schedules).
SCHEDULE_ROWS = schedules.join(schedule_state, schedule_state.c.id == schedules.c.id)
SCHEDULE_COLUMNS = (*schedules.c, *(schedule_state.c[name] for name in STATE_FIELDS))

jobs = Table(
    "jobs",
    metadata,
    Column("id", Uuid, primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("title", String(200), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("payload", JSONDocument, nullable=False),
    Column("payload_schema", JSONDocument, nullable=True),
    Column("target", String(1024), nullable=False),
    # Target options (retries, timeout, queue/routing, webhook secret reference).
    Column("options", JSONDocument, nullable=False),
    Column("source", String(8), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("revision", Integer, nullable=False),
    # Labels (core.labels; migration 0022): a map, {} for none. Jobs are few: a
    # selector over them is judged in Python, with no index of their own.
    Column("labels", JSONDocument, nullable=False, server_default=text("'{}'")),
    UniqueConstraint("tenant", "stack", "name", name="uq_jobs_key"),
    CheckConstraint("status IN ('active', 'inactive')", name="status"),
)

events = Table(
    "events",
    metadata,
    Column("id", EventId, primary_key=True, autoincrement=True),
    Column("code", String(16), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("stack", String(64), nullable=True),
    Column("environment", String(64), nullable=True),
    Column("schedule_id", Uuid, nullable=True),
    Column("schedule_name", String(64), nullable=True),
    Column("item_id", Uuid, nullable=True),
    Column("actor", String(128), nullable=False),
    Column("message", Text, nullable=False),
    Column("scheduled_for", UTCDateTime, nullable=True),
    Column("fired_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("detail", JSONDocument, nullable=False),
    # Filed in the schedule's section of ix_events_schedule yet (store.filing).
    Column("filed", Boolean, nullable=False, server_default=true()),
)
# "Did it run, and if not, why?": a schedule's ledger, newest first. Two
# sections: rows a fire wrote on SQLite wait in the small unfiled one until the
# dispatcher files them (store.filing; migration 0013).
Index("ix_events_schedule", events.c.filed, events.c.schedule_id, events.c.id)
Index("ix_events_tenant", events.c.tenant, events.c.id)
# No index on created_at: pruning deletes an id range (ids grow with time, see
# queue.prune), and each event, a fire's ledger row among them, writes one
# index fewer (migration 0003).
