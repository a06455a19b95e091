"""Housekeeping as `system` schedules: the dispatcher fires them like any other.

Two internal jobs in the reserved tenant `_system`, stack `cronplane`, run by
the worker's built-in `system:` target:

- `expire-items` (every minute): queued items past `expires_at` become
  `expired` (event `X200033ITMEXP` each); running items whose worker lease
  lapsed (the worker died) go back to queued, or to failed past their attempts.
- `prune-history` (daily, 03:17 UTC): finished items, events and closed alerts
  older than the retention (payload `retention_days`, default 30) are deleted,
  and schedule and job versions older than CRONPLANE_VERSION_RETENTION (default
  400 days; a live row's or job's last 20 are kept however old; store.versions.prune,
  store.job_versions.prune).

A third job, `deliver-alert` (`system:deliver`), has no schedule: the alert
evaluator enqueues one item of it per notification and channel.

:func:`ensure_system_schedules` registers them (idempotent; a changed
retention updates the payload). `cronplane dispatcher` and `cronplane serve`
call it at start. Sync never touches `system` rows (SPEC §5).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from cronplane import events as ev
from cronplane import settings
from cronplane.clock import Clock
from cronplane.core.inputs import Declared
from cronplane.core.model import Job, Scope, new_schedule
from cronplane.core.occurrences import next_run
from cronplane.core.versions import Change
from cronplane.store import alerts as alert_store
from cronplane.store import job_versions, queue, versions
from cronplane.store.database import Database
from cronplane.store.events import append_events, event_values
from cronplane.store.jobs import insert_job
from cronplane.store.schedules import get_by_key, insert_schedules, set_payload

SYSTEM_TENANT = "_system"
SYSTEM_STACK = "cronplane"
SYSTEM_ENVIRONMENT = "default"
DEFAULT_RETENTION_DAYS = 30
# Alert notifications: one item of this job per (notification, channel), no schedule.
DELIVER_JOB = "deliver-alert"
DELIVER_OPTIONS = {"max_attempts": 8, "retry_base": 5, "retry_cap": 600}
ACTOR = "housekeeping"

# name → (target, cron, title)
SYSTEM_JOBS: dict[str, tuple[str, str, str]] = {
    "expire-items": ("system:expire", "* * * * *", "Expire stale queue items, recover lost ones"),
    "prune-history": ("system:prune", "17 3 * * *", "Prune finished items and old events"),
}


def ensure_system_schedules(
    database: Database, clock: Clock, *, retention_days: int = DEFAULT_RETENTION_DAYS
) -> None:
    """Register the housekeeping jobs and their schedules (safe to call from every node)."""
    if retention_days < 1:
        raise ValueError("retention must be at least one day")
    now = clock.now()
    payloads: dict[str, dict[str, Any]] = {
        "expire-items": {},
        "prune-history": {"retention_days": retention_days},
    }
    with database.begin() as conn:
        for name, (target, cron, title) in SYSTEM_JOBS.items():
            insert_job(
                conn,
                Job(
                    id=uuid.uuid4(),
                    tenant=SYSTEM_TENANT,
                    stack=SYSTEM_STACK,
                    name=name,
                    title=title,
                    kind="system",
                    status="active",
                    payload=payloads[name],
                    payload_schema=None,
                    target=target,
                    options={"max_attempts": 1},
                    source="system",
                    created_at=now,
                    updated_at=now,
                    revision=1,
                ),
                change=Change("system", "system", now),
            )
            row = get_by_key(conn, SYSTEM_TENANT, SYSTEM_STACK, SYSTEM_ENVIRONMENT, name)
            if row is None:
                definition = Declared(name, cron, "UTC", payloads[name])
                insert_schedules(
                    conn,
                    [
                        new_schedule(
                            Scope(SYSTEM_TENANT, SYSTEM_STACK, SYSTEM_ENVIRONMENT),
                            name,
                            definition,
                            schedule_id=uuid.uuid4(),
                            source="system",
                            now=now,
                            next_run=next_run(cron, "UTC", now),
                        )
                    ],
                    change=Change("system", "system", now),
                )
            elif row.payload != payloads[name]:
                set_payload(conn, row.id, payloads[name], Change("system", "system", now))
        insert_job(conn, deliver_job(now), change=Change("system", "system", now))


def deliver_job(now: datetime) -> Job:
    """The `_system` job alert notifications are items of (no schedule)."""
    return Job(
        id=uuid.uuid4(),
        tenant=SYSTEM_TENANT,
        stack=SYSTEM_STACK,
        name=DELIVER_JOB,
        title="Deliver an alert notification on one channel",
        kind="system",
        status="active",
        payload={},
        payload_schema=None,
        target="system:deliver",
        options=DELIVER_OPTIONS,
        source="system",
        created_at=now,
        updated_at=now,
        revision=1,
    )


def expire(database: Database, clock: Clock) -> dict[str, int]:
    """Expire stale queued items and recover running ones whose worker vanished."""
    now = clock.now()
    with database.begin() as conn:
        expired = queue.expire_stale(conn, now)
        recovered = queue.recover_abandoned(conn, now)
        append_events(
            conn,
            [
                event_values(
                    ev.ITEM_EXPIRED,
                    tenant=item.tenant,
                    stack=item.stack,
                    environment=item.environment,
                    schedule_id=item.schedule_id,
                    item_id=item.id,
                    actor=ACTOR,
                    message=f"{item.job} expired before it ran",
                    now=now,
                    scheduled_for=item.scheduled_for,
                    detail={"expires_at": item.expires_at.isoformat() if item.expires_at else None},
                )
                for item in expired
            ],
        )
    return {"expired": len(expired), "recovered": recovered}


def prune(
    database: Database,
    clock: Clock,
    retention_days: int,
    version_retention_days: int | None = None,
) -> dict[str, int]:
    """Delete finished items, events and closed alerts older than the retention, and
    schedule and job versions older than theirs (default: CRONPLANE_VERSION_RETENTION;
    each row's last 20 are kept)."""
    if retention_days < 1:
        raise ValueError("retention must be at least one day")
    if version_retention_days is None:
        version_retention_days = settings.version_retention_days()
    now = clock.now()
    before = now - timedelta(days=retention_days)
    with database.begin() as conn:
        items, old_events = queue.prune(conn, before)
        closed_alerts = alert_store.prune_closed(conn, before)
        versions_before = now - timedelta(days=version_retention_days)
        old_versions = versions.prune(conn, versions_before)
        old_job_versions = job_versions.prune(conn, versions_before)
    return {
        "items": items,
        "events": old_events,
        "alerts": closed_alerts,
        "versions": old_versions,
        "job_versions": old_job_versions,
    }
