"""The use cases: the only place business rules run (edges stay thin).

    service = ScheduleService(database, clock, on_change=None)

One object, composed of parts that share one `Context` (database, clock,
change hook): `service.schedules`, `service.jobs`, `service.apps` (sync),
`service.runs` (run now, queue items), `service.controls` (pause, resume,
backfill), `service.versions` (versions, diff, rollback, restore), `service.job_versions`
(a job's versions, diff, rollback),
`service.promotion` (environments diffed and promoted), `service.tokens`, `service.audit`, `service.alerts` (alert
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
from dataclasses import replace

from cronplane.clock import Clock
from cronplane.core.outbound import OutboundPolicy
from cronplane.core.quotas import Quota
from cronplane.core.versions import Via
from cronplane.service.alerts import AlertService
from cronplane.service.audit import AuditLog
from cronplane.service.base import Context
from cronplane.service.calendars import Calendars
from cronplane.service.controls import BackfillReport, Controls
from cronplane.service.job_versions import JobRollback, JobVersionDiff, JobVersions
from cronplane.service.jobs import Jobs
from cronplane.service.offered import Offered
from cronplane.service.promotion import PromoteReport, Promotion
from cronplane.service.quotas import Tenants
from cronplane.service.runs import RunService
from cronplane.service.schedule_creates import NewSchedule
from cronplane.service.schedules import Schedules
from cronplane.service.selections import Selections
from cronplane.service.sync import AppReport, Apps
from cronplane.service.tokens import TokenService
from cronplane.service.versions import Rollback, VersionDiff, Versions
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
    prefixes a `python:` job may name (X403252PYDENY otherwise). `replica` (the API's:
    CRONPLANE_READ_URL) is where listings and history are read (Context.listing).
    `via` is how its changes are recorded in their versions (`api`, `cli`; core.versions).
    `tokens` (a shard's service) is the control database, where API tokens are checked.
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
        replica: Database | None = None,
        via: Via = "service",
        tokens: Database | None = None,
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
            replica,
            via,
        )
        self.database = database
        self.clock = clock
        self.schedules = Schedules(self.context)
        self.jobs = Jobs(self.context)
        self.apps = Apps(self.context)
        self.runs = RunService(self.context, on_enqueue=on_enqueue)
        self.controls = Controls(self.context, on_enqueue=on_enqueue)
        # Tokens live in the control database when this one is a shard's (store.shard_map).
        token_context = self.context if tokens is None else replace(self.context, database=tokens)
        self.tokens = TokenService(token_context, cache_seconds=token_cache_seconds)
        self.audit = AuditLog(self.context)
        self.alerts = AlertService(self.context)
        self.tenants = Tenants(self.context)
        self.calendars = Calendars(self.context)
        self.selections = Selections(self.context, self.schedules, self.controls, self.runs)
        self.versions = Versions(self.context, self.schedules)
        self.job_versions = JobVersions(self.context)
        self.promotion = Promotion(self.context, self.schedules)

    create_schedule = Offered("schedules", Schedules.create_schedule)
    create_schedules = Offered("schedules", Schedules.create_schedules)
    get_schedule = Offered("schedules", Schedules.get_schedule)
    get_schedule_by_id = Offered("schedules", Schedules.get_schedule_by_id)
    list_schedules = Offered("schedules", Schedules.list_schedules)
    update_schedule = Offered("schedules", Schedules.update_schedule)
    enable_schedule = Offered("schedules", Schedules.enable_schedule)
    disable_schedule = Offered("schedules", Schedules.disable_schedule)
    remove_schedule = Offered("schedules", Schedules.remove_schedule)
    record_run = Offered("schedules", Schedules.record_run)
    reset_to_manifest = Offered("schedules", Schedules.reset_to_manifest)
    schedule_history = Offered("schedules", Schedules.schedule_history)
    export_audit = Offered("audit", AuditLog.export)
    list_versions = Offered("versions", Versions.list_versions)
    get_version = Offered("versions", Versions.get_version)
    diff_versions = Offered("versions", Versions.diff_versions)
    rollback_schedule = Offered("versions", Versions.rollback)
    restore_schedule = Offered("versions", Versions.restore)
    pause_schedule = Offered("controls", Controls.pause_schedule)
    resume_schedule = Offered("controls", Controls.resume_schedule)
    backfill_schedule = Offered("controls", Controls.backfill_schedule)
    act_on_selection = Offered("selections", Selections.act)
    register_job = Offered("jobs", Jobs.register_job)
    get_job = Offered("jobs", Jobs.get_job)
    list_jobs = Offered("jobs", Jobs.list_jobs)
    update_job = Offered("jobs", Jobs.update_job)
    deactivate_job = Offered("jobs", Jobs.deactivate_job)
    list_job_versions = Offered("job_versions", JobVersions.list_job_versions)
    get_job_version = Offered("job_versions", JobVersions.get_job_version)
    diff_job_versions = Offered("job_versions", JobVersions.diff_job_versions)
    rollback_job = Offered("job_versions", JobVersions.rollback_job)
    diff_environments = Offered("promotion", Promotion.diff_environments)
    promote_environment = Offered("promotion", Promotion.promote_environment)
    sync = Offered("apps", Apps.sync)
    install_app = Offered("apps", Apps.install_app)
    uninstall_app = Offered("apps", Apps.uninstall_app)
    run_now = Offered("runs", RunService.run_now)
    wait = Offered("runs", RunService.wait)
    get_item = Offered("runs", RunService.get_item)
    item_logs = Offered("runs", RunService.item_logs)
    list_items = Offered("runs", RunService.list_items)
    cancel_item = Offered("runs", RunService.cancel_item)
    add_alert_channel = Offered("alerts", AlertService.add_channel)
    list_alert_channels = Offered("alerts", AlertService.list_channels)
    remove_alert_channel = Offered("alerts", AlertService.remove_channel)
    add_alert_rule = Offered("alerts", AlertService.add_rule)
    list_alert_rules = Offered("alerts", AlertService.list_rules)
    remove_alert_rule = Offered("alerts", AlertService.remove_rule)
    list_alerts = Offered("alerts", AlertService.list_alerts)
    ack_alert = Offered("alerts", AlertService.ack_alert)
    list_tenants = Offered("tenants", Tenants.list_tenants)
    tenant_usage = Offered("tenants", Tenants.tenant_usage)
    set_quota = Offered("tenants", Tenants.set_quota)
    list_calendars = Offered("calendars", Calendars.list_calendars)
    get_calendar = Offered("calendars", Calendars.get_calendar)
    save_calendar = Offered("calendars", Calendars.save_calendar)
    remove_calendar = Offered("calendars", Calendars.remove_calendar)


__all__ = [
    "AppReport",
    "BackfillReport",
    "JobRollback",
    "JobVersionDiff",
    "NewSchedule",
    "PromoteReport",
    "Rollback",
    "ScheduleService",
    "VersionDiff",
]
