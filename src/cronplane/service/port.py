"""`ControlPlane`: the use cases the CLI calls, whichever side answers them.

The local `ScheduleService` (over a database) and `client.RemoteService` (over
the HTTP API) both satisfy it; `cli.options.client` is typed with it, so mypy
refuses a command that calls what one of the two lacks, or a signature on
which they drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol
from uuid import UUID

from cronplane.core.alerts import Alert, AlertRule, Channel, RuleSpec
from cronplane.core.audit import AuditPage
from cronplane.core.controls import Missed
from cronplane.core.inputs import CronDeclaration, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.job_versions import JobVersion
from cronplane.core.model import Job, Page, QueueItem, Schedule, Scope
from cronplane.core.promotion import EnvironmentDiff
from cronplane.core.queries import ScheduleQuery
from cronplane.core.quotas import Usage
from cronplane.core.reconcile import SyncPlan
from cronplane.core.selections import SelectionAction, SelectionReport
from cronplane.core.versions import Version
from cronplane.events import Event
from cronplane.manifest import Manifest
from cronplane.service.controls import BackfillReport
from cronplane.service.job_versions import JobRollback, JobVersionDiff
from cronplane.service.promotion import PromoteReport
from cronplane.service.run_logs import RunLog
from cronplane.service.sync import AppReport
from cronplane.service.versions import Rollback, VersionDiff


class ControlPlane(Protocol):
    """Schedules, jobs, apps, runs and alerts, as the CLI uses them."""

    def create_schedule(self, scope: Scope, spec: ScheduleSpec, *, actor: str) -> Schedule: ...

    def get_schedule(self, scope: Scope, name: str) -> Schedule: ...

    def list_schedules(self, tenant: str, query: ScheduleQuery | None = None) -> Page: ...

    def update_schedule(
        self,
        scope: Scope,
        name: str,
        patch: SchedulePatch,
        *,
        actor: str,
        revision: int | None = None,
    ) -> Schedule: ...

    def enable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule: ...

    def disable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule: ...

    def pause_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        until: str | None = None,
        note: str | None = None,
        revision: int | None = None,
        missed: Missed | None = None,
    ) -> Schedule: ...

    def resume_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        revision: int | None = None,
        missed: Missed = "skip",
    ) -> Schedule: ...

    def backfill_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        start: str,
        end: str,
        dry_run: bool = False,
        allow_overlap: bool = False,
    ) -> BackfillReport: ...

    def act_on_selection(
        self,
        tenant: str,
        action: SelectionAction,
        query: ScheduleQuery,
        *,
        actor: str,
        dry_run: bool = False,
        confirm: bool = False,
        until: str | None = None,
        note: str | None = None,
        missed: Missed | None = None,
    ) -> SelectionReport: ...

    def remove_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule: ...

    def list_versions(
        self, scope: Scope, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[Version]: ...

    def get_version(self, scope: Scope, name: str, number: int) -> Version: ...

    def diff_versions(
        self, scope: Scope, name: str, first: int | None = None, second: int | None = None
    ) -> VersionDiff: ...

    def rollback_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        to: int,
        actor: str,
        revision: int | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> Rollback: ...

    def restore_schedule(
        self, scope: Scope, name: str, *, actor: str, reason: str | None = None
    ) -> Schedule: ...

    def reset_to_manifest(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule: ...

    def schedule_history(
        self, scope: Scope, name: str, *, limit: int = 50, before_id: int | None = None
    ) -> list[Event]: ...

    def export_audit(
        self,
        tenant: str,
        *,
        since: str | None = None,
        until: str | None = None,
        after: int | None = None,
        kind: str = "all",
        limit: int = 1000,
    ) -> AuditPage: ...

    def list_jobs(
        self,
        tenant: str,
        stack: str | None = None,
        *,
        status: str | None = None,
        selector: str | None = None,
    ) -> list[Job]: ...

    def get_job(self, tenant: str, stack: str, name: str) -> Job: ...

    def register_job(self, tenant: str, stack: str, spec: JobSpec, *, actor: str) -> Job: ...

    def list_job_versions(
        self, tenant: str, stack: str, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[JobVersion]: ...

    def get_job_version(self, tenant: str, stack: str, name: str, number: int) -> JobVersion: ...

    def diff_job_versions(
        self,
        tenant: str,
        stack: str,
        name: str,
        first: int | None = None,
        second: int | None = None,
    ) -> JobVersionDiff: ...

    def rollback_job(
        self,
        tenant: str,
        stack: str,
        name: str,
        *,
        to: int,
        actor: str,
        revision: int | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> JobRollback: ...

    def sync(
        self,
        scope: Scope,
        crons: Mapping[str, CronDeclaration],
        *,
        actor: str,
        dry_run: bool = False,
    ) -> SyncPlan: ...

    def install_app(
        self,
        tenant: str,
        environment: str,
        manifest: Manifest,
        *,
        actor: str,
        dry_run: bool = False,
    ) -> AppReport: ...

    def uninstall_app(self, scope: Scope, *, actor: str, dry_run: bool = False) -> AppReport: ...

    def diff_environments(
        self, tenant: str, from_env: str, to_env: str, *, stack: str | None = None
    ) -> EnvironmentDiff: ...

    def promote_environment(
        self,
        tenant: str,
        from_env: str,
        to_env: str,
        *,
        actor: str,
        stack: str | None = None,
        only: Sequence[str] | None = None,
        token: str | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> PromoteReport: ...

    def run_now(
        self, scope: Scope, name: str, *, actor: str, payload: dict[str, Any] | None = None
    ) -> QueueItem: ...

    def wait(self, tenant: str, item_id: UUID, *, timeout: float | None = None) -> QueueItem: ...

    def get_item(self, tenant: str, item_id: UUID) -> QueueItem: ...

    def item_logs(self, tenant: str, item_id: UUID) -> RunLog: ...

    def list_items(
        self,
        tenant: str,
        *,
        status: str | None = None,
        schedule_id: UUID | None = None,
        limit: int = 100,
    ) -> list[QueueItem]: ...

    def cancel_item(self, tenant: str, item_id: UUID, *, actor: str) -> QueueItem: ...

    def add_alert_channel(
        self,
        tenant: str,
        name: str,
        kind: str,
        config: Mapping[str, Any],
        *,
        secret: str | None,
        actor: str,
    ) -> Channel: ...

    def list_alert_channels(self, tenant: str) -> list[Channel]: ...

    def remove_alert_channel(self, tenant: str, name: str, *, actor: str) -> Channel: ...

    def add_alert_rule(self, tenant: str, spec: RuleSpec, *, actor: str) -> AlertRule: ...

    def list_alert_rules(self, tenant: str) -> list[AlertRule]: ...

    def remove_alert_rule(self, tenant: str, name: str, *, actor: str) -> AlertRule: ...

    def list_alerts(
        self, tenant: str, *, status: str | None = None, limit: int = 100
    ) -> list[Alert]: ...

    def ack_alert(self, tenant: str, alert_id: UUID, *, actor: str) -> Alert: ...

    def list_tenants(self) -> list[Usage]: ...

    def tenant_usage(self, tenant: str) -> Usage: ...

    def set_quota(
        self,
        tenant: str,
        limits: dict[str, Any],
        *,
        clear: tuple[str, ...] = (),
        actor: str,
    ) -> Usage: ...

    def list_calendars(self, tenant: str) -> list[dict[str, Any]]: ...

    def get_calendar(self, tenant: str, name: str) -> dict[str, Any]: ...

    def save_calendar(
        self,
        tenant: str,
        name: str,
        *,
        weekly: Iterable[str] = (),
        dates: Iterable[str] = (),
        holidays: str | None = None,
        description: str | None = None,
        revision: int | None = None,
        actor: str,
    ) -> dict[str, Any]: ...

    def remove_calendar(self, tenant: str, name: str, *, actor: str) -> dict[str, Any]: ...
