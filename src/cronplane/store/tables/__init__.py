"""The tables, as SQLAlchemy Core, one module per noun. Migrations must agree with these
(tested).

Every datetime column is `UTCDateTime`. Names of constraints and indexes are
fixed here so migrations and tests can refer to them. Importing the package
registers every table on `metadata`.
"""

from __future__ import annotations

from cronplane.store.tables.alerts import (
    alert_channels,
    alert_cursors,
    alert_rules,
    alert_watches,
    alerts,
)
from cronplane.store.tables.base import NAMING, EventId, metadata
from cronplane.store.tables.calendars import calendars
from cronplane.store.tables.labels import label_key_sets, schedule_key_sets, schedule_labels
from cronplane.store.tables.schedules import (
    SCHEDULE_COLUMNS,
    SCHEDULE_ROWS,
    STATE_FIELDS,
    events,
    jobs,
    schedule_state,
    schedules,
)
from cronplane.store.tables.shards import shard_nodes, shards, tenant_moves, tenant_shards
from cronplane.store.tables.versions import job_versions, schedule_versions
from cronplane.store.tables.work import (
    api_tokens,
    item_attempts,
    leases,
    queue_items,
    tenant_quotas,
)

__all__ = [
    "NAMING",
    "SCHEDULE_COLUMNS",
    "SCHEDULE_ROWS",
    "STATE_FIELDS",
    "EventId",
    "alert_channels",
    "alert_cursors",
    "alert_rules",
    "alert_watches",
    "alerts",
    "api_tokens",
    "calendars",
    "events",
    "item_attempts",
    "job_versions",
    "jobs",
    "label_key_sets",
    "leases",
    "metadata",
    "queue_items",
    "schedule_key_sets",
    "schedule_labels",
    "schedule_state",
    "schedule_versions",
    "schedules",
    "shard_nodes",
    "shards",
    "tenant_moves",
    "tenant_quotas",
    "tenant_shards",
]
