"""The use cases: the only place business rules run (edges stay thin).

    service = ScheduleService(database, clock, on_change=None)

One object, composed of parts that share one `Context` (database, clock,
change hook): `service.schedules`, `service.jobs`, `service.apps` (sync),
`service.runs` (run now, queue items), `service.controls` (pause, resume,
backfill), `service.tokens`, `service.audit`, `service.alerts` (alert
channels, rules, alerts).
The use cases people call are also the service's own methods
(`service.create_schedule(...)`), so the API, CLI and UI hold one object;
the CLI's part of them is the `ControlPlane` protocol (`service.port`),
which the remote client satisfies too.

One transaction per use case; every change writes an event with its actor.
Every write that changes a schedule runs `pg_notify('cronplane_schedules', '')`
inside its transaction (PostgreSQL) and, after commit, calls `on_change()`
(the dispatcher passes a hook that wakes its loop early).
"""

from __future__ import annotations

from collections.abc import Callable

from cronplane.clock import Clock
from cronplane.core.outbound import OutboundPolicy
from cronplane.core.quotas import Quota
from cronplane.service.alerts import AlertService
from cronplane.service.audit import AuditLog
from cronplane.service.base import Context
from cronplane.service.controls import BackfillReport, Controls
from cronplane.service.jobs import Jobs
from cronplane.service.quotas import Tenants
from cronplane.service.runs import RunService
from cronplane.service.schedule_creates import NewSchedule
from cronplane.service.schedules import Schedules
from cronplane.service.sync import AppReport, Apps
from cronplane.service.tokens import TokenService
from cronplane.settings import (
    command_targets_enabled,
    outbound_policy,
    python_target_prefixes,
    quota_defaults,
)
from cronplane.store.database import Database


class ScheduleService:
    """Every use case, over one Database and Clock.

    `clock` gives "now" for every rule (FakeClock in tests); `on_change` runs
    after each commit that changed a schedule, `on_enqueue` after a run-now
    enqueued an item (in-process workers wake); `token_cache_seconds` is how
    long a valid API token is remembered; `min_interval` (seconds, the
    CRONPLANE_MIN_INTERVAL setting) is the shortest interval a create, update
    or sync may set (X400010INTMIN otherwise). `allow_commands` (default: the
    CRONPLANE_ALLOW_COMMAND_TARGETS variable) lets platform admins create
    `command:` jobs; `local_admin=False` (the API's service) makes every call
    name its principal for that, instead of being trusted as the database's holder.
    `quotas` (default: the CRONPLANE_QUOTA_* variables) is every tenant's default quota;
    `outbound` (default: CRONPLANE_OUTBOUND_ALLOW) the addresses webhooks may name;
    `python_targets` (default: the CRONPLANE_PYTHON_TARGETS variable) are the module
    prefixes a `python:` job may name (X403252PYDENY otherwise).
    """

    def __init__(
        self,
        database: Database,
        clock: Clock,
        on_change: Callable[[], None] | None = None,
        *,
        on_enqueue: Callable[[], None] | None = None,
        token_cache_seconds: float = 0.0,
        min_interval: int = 1,
        allow_commands: bool | None = None,
        local_admin: bool = True,
        quotas: Quota | None = None,
        outbound: OutboundPolicy | None = None,
        python_targets: tuple[str, ...] | None = None,
    ) -> None:
        if allow_commands is None:
            allow_commands = command_targets_enabled()
        if quotas is None:
            quotas = quota_defaults()
        if python_targets is None:
            python_targets = python_target_prefixes()
        self.context = Context(
            database,
            clock,
            on_change,
            min_interval,
            allow_commands,
            local_admin,
            quotas,
            outbound_policy() if outbound is None else outbound,
            python_targets,
        )
        self.database = database
        self.clock = clock
        self.schedules = Schedules(self.context)
        self.jobs = Jobs(self.context)
        self.apps = Apps(self.context)
        self.runs = RunService(database, clock, on_enqueue=on_enqueue, quotas=quotas)
        self.controls = Controls(self.context, on_enqueue=on_enqueue)
        self.tokens = TokenService(database, clock, cache_seconds=token_cache_seconds)
        self.audit = AuditLog(database)
        self.alerts = AlertService(self.context)
        self.tenants = Tenants(self.context)

        schedules, jobs, apps, runs = self.schedules, self.jobs, self.apps, self.runs
        self.create_schedule = schedules.create_schedule
        self.create_schedules = schedules.create_schedules
        self.get_schedule = schedules.get_schedule
        self.get_schedule_by_id = schedules.get_schedule_by_id
        self.list_schedules = schedules.list_schedules
        self.update_schedule = schedules.update_schedule
        self.enable_schedule = schedules.enable_schedule
        self.disable_schedule = schedules.disable_schedule
        self.remove_schedule = schedules.remove_schedule
        self.record_run = schedules.record_run
        self.reset_to_manifest = schedules.reset_to_manifest
        self.schedule_history = schedules.schedule_history
        self.pause_schedule = self.controls.pause_schedule
        self.resume_schedule = self.controls.resume_schedule
        self.backfill_schedule = self.controls.backfill_schedule
        self.register_job = jobs.register_job
        self.get_job = jobs.get_job
        self.list_jobs = jobs.list_jobs
        self.update_job = jobs.update_job
        self.deactivate_job = jobs.deactivate_job
        self.sync = apps.sync
        self.install_app = apps.install_app
        self.uninstall_app = apps.uninstall_app
        self.run_now = runs.run_now
        self.wait = runs.wait
        self.get_item = runs.get_item
        self.list_items = runs.list_items
        self.cancel_item = runs.cancel_item
        alerts = self.alerts
        self.add_alert_channel = alerts.add_channel
        self.list_alert_channels = alerts.list_channels
        self.remove_alert_channel = alerts.remove_channel
        self.add_alert_rule = alerts.add_rule
        self.list_alert_rules = alerts.list_rules
        self.remove_alert_rule = alerts.remove_rule
        self.list_alerts = alerts.list_alerts
        self.ack_alert = alerts.ack_alert
        self.list_tenants = self.tenants.list_tenants
        self.tenant_usage = self.tenants.tenant_usage
        self.set_quota = self.tenants.set_quota


__all__ = ["AppReport", "BackfillReport", "NewSchedule", "ScheduleService"]
