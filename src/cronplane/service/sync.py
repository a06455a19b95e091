"""App sync (SPEC §5): reconcile an app's declared crons with its rows; install and
uninstall apps (jobs + crons in one transaction).

Steps of one sync, all in one transaction:
1. resolve the declarations (job, normalized cron with its H seed, payload default);
2. lock the scope (PostgreSQL advisory lock; SQLite writes are serialized anyway)
   and read its rows;
3. plan (`core.reconcile.plan_sync`, pure) and check the five-year rule for
   what the plan writes; any problem -> InvalidManifest, nothing written;
   then the tenant's quotas (service.quotas): a plan that would take the
   tenant past max_schedules (or an install past max_jobs), or set a cron
   faster than its min_interval, is refused whole, the plan in the error;
4. apply: bulk insert (a duplicate key is skipped: idempotent), per-row
   updates, bulk delete (a vanished row is not an error), one event per change
   plus APP_SYNCED. An empty plan writes nothing, not even an event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection

from cronplane import events
from cronplane.core.access import Principal
from cronplane.core.codec import to_document
from cronplane.core.controls import fire_at, jitter_offset
from cronplane.core.inputs import CronDeclaration, JobPatch
from cronplane.core.model import Job, Scope, new_schedule
from cronplane.core.quotas import Quota
from cronplane.core.reconcile import (
    SyncedRow,
    SyncPlan,
    check_fires,
    plan_sync,
    resolve_declarations,
    rows_to_inspect,
)
from cronplane.core.versions import manifest_digest
from cronplane.errors import InvalidManifest, QuotaExceeded
from cronplane.ids import time_ordered_id
from cronplane.manifest import Manifest
from cronplane.service import quotas
from cronplane.service.alerts import sync_app_rules
from cronplane.service.base import ServiceBase, Transaction, checked_scope
from cronplane.service.jobs import (
    app_jobs_change,
    checked_job,
    deactivate_app_jobs,
    job_changes,
    job_event,
    job_fields,
    new_job,
    update_job_in,
)
from cronplane.store import calendars as calendar_store
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.events import append_events, event_values

# How many names the APP_SYNCED event lists per outcome (the counts are always whole).
EVENT_NAMES_LIMIT = 100


@dataclass(frozen=True, slots=True)
class AppReport:
    """What installing or uninstalling an app did: its jobs, and the sync plan."""

    stack: str
    plan: SyncPlan
    jobs_registered: tuple[str, ...] = ()
    jobs_updated: tuple[str, ...] = ()
    jobs_deactivated: tuple[str, ...] = ()
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**to_document(self), "plan": self.plan.to_dict(), "summary": self.plan.summary()}


# A sync creating at least this many rows refreshes the planner's statistics.
BULK_LOAD_ROWS = 10_000


class Apps(ServiceBase):
    """App sync: sync, install_app, uninstall_app."""

    def sync(
        self,
        scope: Scope,
        crons: Mapping[str, CronDeclaration],
        *,
        actor: str,
        dry_run: bool = False,
    ) -> SyncPlan:
        """Reconcile the app rows of `scope` with `crons`; return the plan applied.

        InvalidManifest (detail `problems`, each `crons.NAME.FIELD: CODE message`)
        when any declaration is invalid; then nothing is written.
        """
        checked_scope(scope)
        if dry_run:
            with self._read() as conn:
                jobs = _jobs_by_name(conn, scope)
                plan, _, _ = self._plan(conn, scope, crons, jobs, self.clock.now())
                self._check_quotas(conn, scope, plan)
                return plan
        with self._write() as tx:
            plan = self._sync(tx, scope, crons, actor)
        self._after_bulk_load(plan)
        return plan

    def install_app(
        self,
        tenant: str,
        environment: str,
        manifest: Manifest,
        *,
        actor: str,
        dry_run: bool = False,
        principal: Principal | None = None,
    ) -> AppReport:
        """Register (or update) the manifest's jobs, then sync its crons; one transaction.
        A manifest that creates or changes a `command:` job needs a platform admin
        `principal` (refused before anything is written, on a dry run too)."""
        scope = checked_scope(Scope(tenant, manifest.name, environment))
        specs = {name: checked_job(spec) for name, spec in manifest.jobs.items()}
        caller = self.context.caller(principal)
        if dry_run:
            with self._read() as conn:
                now = self.clock.now()
                jobs = _jobs_by_name(conn, scope)
                registered = sorted(set(specs) - set(jobs))
                updated = []
                probe = Transaction(conn, now)
                for name, spec in specs.items():
                    job = new_job(tenant, scope.stack, spec, "app", probe)
                    caller.check_job(jobs.get(name), job)
                    if name in jobs and job_changes(jobs[name], job_fields(job)):
                        updated.append(name)
                    jobs[name] = job
                plan, _, _ = self._plan(conn, scope, manifest.crons, jobs, now)
                quota = self._check_quotas(conn, scope, plan)
                quotas.room_for_jobs(conn, tenant, quota, len(registered))
            # Names sorted on both paths: a dry run reports exactly what the real one does.
            return AppReport(
                scope.stack, plan, tuple(registered), tuple(sorted(updated)), dry_run=True
            )
        with self._write() as tx:
            registered, updated = [], []
            by = app_jobs_change(tx, actor, specs)
            quota = quotas.tenant_quota(tx.conn, self.context.quotas, tenant)
            if quota.max_jobs is not None:  # the new jobs are counted only under a limit
                have = _jobs_by_name(tx.conn, scope)
                quotas.room_for_jobs(tx.conn, tenant, quota, len(set(specs) - set(have)))
            for name, spec in specs.items():
                current = job_store.get_job(tx.conn, tenant, scope.stack, name, for_update=True)
                if current is None:
                    job = new_job(tenant, scope.stack, spec, "app", tx)
                    caller.check_job(None, job)
                    # A concurrent install may have registered it first: same outcome.
                    if job_store.insert_job(tx.conn, job, change=by):
                        registered.append(name)
                        job_event(tx, events.JOB_REGISTERED, job, actor, f"job {name} registered")
                    continue
                patch = JobPatch(**job_fields(new_job(tenant, scope.stack, spec, "app", tx)))
                kept = update_job_in(tx, current, patch, actor=actor, caller=caller, change=by)
                if kept != current:
                    updated.append(name)
            plan = self._sync(tx, scope, manifest.crons, actor)
            sync_app_rules(tx, scope, manifest.alerts, actor=actor)
        self._after_bulk_load(plan)
        return AppReport(scope.stack, plan, tuple(sorted(registered)), tuple(sorted(updated)))

    def _after_bulk_load(self, plan: SyncPlan) -> None:
        """Refresh the planner's statistics after a sync that created many rows.

        Until autovacuum gets to it (a minute or more), PostgreSQL plans with
        the old row estimates: after loading 100,000 rows into an empty
        table, a tenant listing sorted all of them (76 ms) instead of walking
        `ix_schedules_tenant_name` (0.1 ms). Every read joins the rows' state
        (store.tables.SCHEDULE_ROWS), and the fair fill walks its tenant
        index, so both tables.
        """
        if len(plan.created) >= BULK_LOAD_ROWS:
            self.database.refresh_statistics("schedules", "schedule_state")

    def uninstall_app(self, scope: Scope, *, actor: str, dry_run: bool = False) -> AppReport:
        """Sync an empty map (removes the app's rows in this environment); when no
        environment has app rows of the stack left, deactivate the stack's app jobs.

        Jobs are kept (inactive), not deleted: history and user schedules refer to them.
        """
        checked_scope(scope)
        if dry_run:
            with self._read() as conn:
                jobs = _jobs_by_name(conn, scope)
                plan, _, _ = self._plan(conn, scope, {}, jobs, self.clock.now())
                # What the real run decides after its removals: no app row left anywhere.
                left = schedule_store.count_source(conn, scope.tenant, scope.stack, "app")
                doomed = (
                    []
                    if left - len(plan.removed)
                    else job_store.list_jobs(
                        conn, scope.tenant, scope.stack, status="active", source="app"
                    )
                )
            return AppReport(
                scope.stack,
                plan,
                jobs_deactivated=tuple(job.name for job in doomed),
                dry_run=True,
            )
        with self._write() as tx:
            plan = self._sync(tx, scope, {}, actor)
            sync_app_rules(tx, scope, {}, actor=actor)  # the app's alert rules go with it
            deactivated: list[str] = []
            if schedule_store.count_source(tx.conn, scope.tenant, scope.stack, "app") == 0:
                # Deactivating changes no command: any caller that may sync may.
                anyone = self.context.caller(None)
                deactivated = deactivate_app_jobs(tx, scope.tenant, scope.stack, actor, anyone)
        return AppReport(scope.stack, plan, jobs_deactivated=tuple(deactivated))

    # -- steps ---------------------------------------------------------------

    def _plan(
        self,
        conn: Connection,
        scope: Scope,
        crons: Mapping[str, CronDeclaration],
        jobs: Mapping[str, Job],
        now: Any,
    ) -> tuple[SyncPlan, dict[str, Any], dict[str, Any]]:
        declared, problems = resolve_declarations(scope, crons, jobs)
        if problems:
            raise _invalid(problems)
        heads = schedule_store.heads_in_scope(conn, scope.tenant, scope.stack, scope.environment)
        full = schedule_store.by_names(
            conn, scope.tenant, scope.stack, scope.environment, rows_to_inspect(declared, heads)
        )
        rows: dict[str, SyncedRow] = {head.name: head for head in heads}
        rows.update((row.name, row) for row in full)
        plan = plan_sync(declared, rows.values())
        # A tenant's min_interval quota replaces the platform's (judged by _check_quotas).
        own = quotas.tenant_quota(conn, self.context.quotas, scope.tenant).min_interval
        minimum = self.context.min_interval if own is None else 1
        calendars = calendar_store.tenant_calendars(conn, scope.tenant)
        fires, problems = check_fires(plan, {r.name: r for r in full}, now, minimum, calendars)
        if problems:
            raise _invalid(problems)
        return plan, rows, fires

    def _check_quotas(self, conn: Connection, scope: Scope, plan: SyncPlan) -> Quota:
        """Refuse the whole plan (its detail in the error) when it would take the tenant
        past max_schedules or writes a cron faster than the tenant's min_interval."""
        quota = quotas.tenant_quota(conn, self.context.quotas, scope.tenant)
        detail = {"plan": _plan_detail(plan)}
        if quota.min_interval is not None:
            wanted = [c.declared.cron for c in plan.created]
            wanted += [u.changes["cron"] for u in plan.updated if "cron" in u.changes]
            for cron in wanted:
                try:
                    quotas.check_interval(cron, quota, 1, scope.tenant)
                except QuotaExceeded as error:
                    error.detail.update(detail)
                    raise
        growth = len(plan.created) - len(plan.removed)
        quotas.room_for_schedules(conn, scope.tenant, quota, growth, **detail)
        return quota

    def _sync(
        self,
        tx: Transaction,
        scope: Scope,
        crons: Mapping[str, CronDeclaration],
        actor: str,
    ) -> SyncPlan:
        schedule_store.lock_scope(tx.conn, scope.tenant, scope.stack, scope.environment)
        jobs = _jobs_by_name(tx.conn, scope)
        plan, rows, fires = self._plan(tx.conn, scope, crons, jobs, tx.now)
        if not plan.writes:
            return plan
        self._check_quotas(tx.conn, scope, plan)
        now = tx.now
        # The versions it writes name the sync and what it applied (core.versions).
        digest = manifest_digest({name: to_document(cron) for name, cron in crons.items()})
        change = replace(tx.change(actor, digest=digest), via="sync")
        event_rows: list[dict[str, Any]] = []

        def event(code: Any, schedule: SyncedRow, verb: str, detail: dict[str, Any]) -> None:
            event_rows.append(
                event_values(
                    code,
                    tenant=scope.tenant,
                    stack=scope.stack,
                    environment=scope.environment,
                    schedule_id=schedule.id,
                    schedule_name=schedule.name,
                    actor=actor,
                    message=f"schedule {schedule.name} {verb} by sync",
                    now=now,
                    detail={"revision": schedule.revision, **detail},
                )
            )

        new_rows = []
        for created in plan.created:
            schedule_id = time_ordered_id(now)
            offset = jitter_offset(schedule_id, created.declared.jitter)
            # A declaration may create its row disabled (an imported paused entry).
            enabled = crons[created.name].enabled
            new_rows.append(
                new_schedule(
                    scope,
                    created.name,
                    created.declared,
                    schedule_id=schedule_id,
                    source="app",
                    now=now,
                    enabled=enabled,
                    next_run=fire_at(fires[created.name], offset) if enabled else None,
                    declared=created.declared.to_dict(),
                    jitter_offset=offset,
                )
            )
        inserted = schedule_store.insert_schedules(tx.conn, new_rows, change=change)
        for row in new_rows:
            if row.id in inserted:
                event(events.SCHEDULE_CREATED, row, "created", {"sync": True})
        for item in plan.updated:
            row = rows[item.name]
            values: dict[str, Any] = {
                **item.changes,
                "declared": item.declared.to_dict(),
                "revision": row.revision + 1,
                "updated_at": now,
            }
            if item.name in fires:
                offset = jitter_offset(row.id, item.changes.get("jitter", row.jitter))
                values["jitter_offset"] = offset
                if row.enabled:
                    values["next_run"] = fire_at(fires[item.name], offset)
            # A row changed since we read it (an operator's edit) is left for the next sync.
            if schedule_store.update_schedule(
                tx.conn, row.id, values, expected_revision=row.revision, change=change
            ):
                event(
                    events.SCHEDULE_UPDATED,
                    row,
                    "updated",
                    {"sync": True, "fields": sorted(item.changes)},
                )
        schedule_store.delete_schedules(tx.conn, [item.id for item in plan.removed], change=change)
        for gone in plan.removed:
            event(events.SCHEDULE_REMOVED, rows[gone.name], "removed", {"sync": True})
        event_rows.append(
            event_values(
                events.APP_SYNCED,
                tenant=scope.tenant,
                stack=scope.stack,
                environment=scope.environment,
                actor=actor,
                message=f"app {scope.stack} synced by {actor}",
                now=now,
                detail=_plan_detail(plan),
            )
        )
        append_events(tx.conn, event_rows)
        tx.schedules_changed()
        return plan


def _jobs_by_name(conn: Connection, scope: Scope) -> dict[str, Job]:
    return {job.name: job for job in job_store.list_jobs(conn, scope.tenant, scope.stack)}


def _invalid(problems: list[str]) -> InvalidManifest:
    count = len(problems)
    return InvalidManifest(
        f"{count} invalid declaration{'s' if count != 1 else ''}: {problems[0]}"
        + (" …" if count > 1 else ""),
        {"problems": problems},
    )


def _plan_detail(plan: SyncPlan) -> dict[str, Any]:
    document = plan.to_dict()
    detail: dict[str, Any] = {"summary": plan.summary()}
    for key in ("created", "updated", "removed", "conflicts", "drift"):
        detail[key] = document[key][:EVENT_NAMES_LIMIT]
    return detail


__all__ = ["AppReport", "Apps"]
