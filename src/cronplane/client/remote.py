"""`RemoteService`: the service's methods, over the HTTP API (what the remote CLI uses).

`RemoteService(url, token)` is a `ControlPlane` (`cronplane.service.port`)
like the local `ScheduleService`: the same methods, arguments and return
types (mypy checks both), so a command renders the same output whichever it
talks to. Answers are decoded with the codec the API encodes with
(`core.codec.from_document`).
A coded error answer is raised again as the same `CronplaneError` class (so
the CLI exits with the same code); a server that cannot be reached is
`Unavailable` (exit 7).

What the server does not send back is not invented: a sync plan's row ids
are the nil UUID here (no command shows them). The `actor` argument is
accepted for signature parity and ignored: the server records the token's
name as the actor.

The public `cronplane.client.Client` is a face over one of these: every
request either makes goes through `RemoteHTTP._request` (client.http).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cronplane.client.alerts import RemoteAlerts
from cronplane.client.audit import RemoteAudit
from cronplane.client.calendars import RemoteCalendars
from cronplane.client.http import segment
from cronplane.client.job_versions import RemoteJobVersions
from cronplane.client.promotion import RemotePromotion
from cronplane.client.queue import RemoteQueue
from cronplane.client.versions import RemoteVersions
from cronplane.core.codec import encode_value, from_document, to_document
from cronplane.core.controls import Missed
from cronplane.core.inputs import CronDeclaration, JobPatch, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Job, Page, Schedule, Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.reconcile import (
    SyncPlan,
)
from cronplane.core.selections import SelectionAction, SelectionReport
from cronplane.events import Event
from cronplane.manifest import Manifest
from cronplane.service import AppReport, BackfillReport


def _given(record: object) -> dict[str, Any]:
    """A request record's document without its unset (None) fields: the server's defaults apply."""
    return {key: value for key, value in to_document(record).items() if value is not None}


def _manifest_document(manifest: Manifest) -> dict[str, Any]:
    jobs: dict[str, Any] = {}
    for name, spec in manifest.jobs.items():
        job = _given(spec)
        del job["name"]  # the key of the `jobs:` map
        if "payload_schema" in job:
            job["schema"] = job.pop("payload_schema")
        jobs[name] = job
    crons = {name: _given(decl) for name, decl in manifest.crons.items()}
    alerts = {name: _given(decl) for name, decl in manifest.alerts.items()}
    return {"name": manifest.name, "jobs": jobs, "crons": crons, "alerts": alerts}


class RemoteService(
    RemoteQueue,
    RemoteAlerts,
    RemoteCalendars,
    RemoteVersions,
    RemoteJobVersions,
    RemotePromotion,
    RemoteAudit,
):
    """The use cases the CLI needs, answered by a cronplane server (the plumbing in
    client.http, runs and the queue in client.queue, alerts in client.alerts, the
    audit export in client.audit)."""

    # -- schedules --------------------------------------------------------------

    def create_schedule(self, scope: Scope, spec: ScheduleSpec, *, actor: str) -> Schedule:
        """POST a new user schedule."""
        body = {**_given(spec), "stack": scope.stack, "environment": scope.environment}
        answer = self._request("POST", f"{self._tenant(scope.tenant)}/schedules", body=body)
        return from_document(Schedule, answer)

    def get_schedule(self, scope: Scope, name: str) -> Schedule:
        """GET one schedule."""
        return from_document(Schedule, self._request("GET", self._schedule(scope, name)))

    def list_schedules(self, tenant: str, query: ScheduleQuery | None = None) -> Page:
        """GET one page of schedules."""
        params = (query or ScheduleQuery()).params()
        answer = self._request("GET", f"{self._tenant(tenant)}/schedules", params=params)
        return from_document(Page, answer)

    def update_schedule(
        self,
        scope: Scope,
        name: str,
        patch: SchedulePatch,
        *,
        actor: str,
        revision: int | None = None,
    ) -> Schedule:
        """PATCH the schedule with the patch's set fields (None clears a nullable one)."""
        body = {key: encode_value(value) for key, value in patch.given().items()}
        path = self._schedule(scope, name)
        return from_document(Schedule, self._request("PATCH", path, body=body, revision=revision))

    def enable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """POST …/enable."""
        path = self._schedule(scope, name) + "/enable"
        return from_document(Schedule, self._request("POST", path, revision=revision))

    def disable_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """POST …/disable."""
        path = self._schedule(scope, name) + "/disable"
        return from_document(Schedule, self._request("POST", path, revision=revision))

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
    ) -> Schedule:
        """POST …/pause with {until, note} (and `missed` when given)."""
        path = self._schedule(scope, name) + "/pause"
        body: dict[str, Any] = {"until": until, "note": note}
        if missed is not None:
            body["missed"] = missed
        return from_document(Schedule, self._request("POST", path, body=body, revision=revision))

    def resume_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        actor: str,
        revision: int | None = None,
        missed: Missed = "skip",
    ) -> Schedule:
        """POST …/resume."""
        path = self._schedule(scope, name) + "/resume"
        body = {"missed": missed}
        return from_document(Schedule, self._request("POST", path, body=body, revision=revision))

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
    ) -> BackfillReport:
        """POST …/backfill with {from, to, dry_run, allow_overlap}."""
        path = self._schedule(scope, name) + "/backfill"
        body = {"from": start, "to": end, "dry_run": dry_run, "allow_overlap": allow_overlap}
        return from_document(BackfillReport, self._request("POST", path, body=body))

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
    ) -> SelectionReport:
        """POST …/schedules/actions/ACTION with the query's rows and the options."""
        names = {"selector": query.selector, "search": query.search}
        scope = {"stack": query.stack, "environment": query.environment}
        options = {"until": until, "note": note, "missed": missed} if action == "pause" else {}
        body = {
            **{key: value for key, value in {**names, **scope, **options}.items() if value},
            **({"missed": missed or "skip"} if action == "resume" else {}),
            "dry_run": dry_run,
            "confirm": confirm,
        }
        path = f"{self._tenant(tenant)}/schedules/actions/{segment(action)}"
        return SelectionReport.from_dict(self._request("POST", path, body=body))

    def remove_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """DELETE the schedule; returns it as it was."""
        path = self._schedule(scope, name)
        return from_document(Schedule, self._request("DELETE", path, revision=revision))

    def reset_to_manifest(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """POST …/reset."""
        path = self._schedule(scope, name) + "/reset"
        return from_document(Schedule, self._request("POST", path, revision=revision))

    def schedule_history(
        self, scope: Scope, name: str, *, limit: int = 50, before_id: int | None = None
    ) -> list[Event]:
        """GET …/history."""
        params = {"limit": limit, "before": before_id}
        answer = self._request("GET", self._schedule(scope, name) + "/history", params=params)
        return [from_document(Event, row) for row in answer["items"]]

    # -- jobs --------------------------------------------------------------------

    def list_jobs(
        self,
        tenant: str,
        stack: str | None = None,
        *,
        status: str | None = None,
        selector: str | None = None,
    ) -> list[Job]:
        """GET the tenant's jobs."""
        params = {"stack": stack, "status": status, "selector": selector}
        answer = self._request("GET", f"{self._tenant(tenant)}/jobs", params=params)
        return [from_document(Job, row) for row in answer["items"]]

    def register_job(self, tenant: str, stack: str, spec: JobSpec, *, actor: str) -> Job:
        """POST a new job."""
        body = {**_given(spec), "stack": stack}
        return from_document(Job, self._request("POST", f"{self._tenant(tenant)}/jobs", body=body))

    def get_job(self, tenant: str, stack: str, name: str) -> Job:
        """GET one job."""
        return from_document(Job, self._request("GET", self._job(tenant, stack, name)))

    def update_job(
        self,
        tenant: str,
        stack: str,
        name: str,
        patch: JobPatch,
        *,
        actor: str,
        revision: int | None = None,
    ) -> Job:
        """PATCH the job with the patch's set fields (`payload_schema: None` clears it)."""
        body = {key: encode_value(value) for key, value in patch.given().items()}
        path = self._job(tenant, stack, name)
        return from_document(Job, self._request("PATCH", path, body=body, revision=revision))

    def deactivate_job(
        self, tenant: str, stack: str, name: str, *, actor: str, revision: int | None = None
    ) -> Job:
        """POST …/deactivate."""
        path = self._job(tenant, stack, name) + "/deactivate"
        return from_document(Job, self._request("POST", path, revision=revision))

    # -- apps ----------------------------------------------------------------------

    def sync(
        self,
        scope: Scope,
        crons: Mapping[str, CronDeclaration],
        *,
        actor: str,
        dry_run: bool = False,
    ) -> SyncPlan:
        """POST …/sync."""
        body = {
            "stack": scope.stack,
            "environment": scope.environment,
            "crons": {name: _given(decl) for name, decl in crons.items()},
            "dry_run": dry_run,
        }
        answer = self._request("POST", f"{self._tenant(scope.tenant)}/sync", body=body)
        return SyncPlan.from_dict(answer["plan"])

    def install_app(
        self,
        tenant: str,
        environment: str,
        manifest: Manifest,
        *,
        actor: str,
        dry_run: bool = False,
    ) -> AppReport:
        """POST …/apps with the manifest."""
        body = {
            "manifest": _manifest_document(manifest),
            "environment": environment,
            "dry_run": dry_run,
        }
        answer = self._request("POST", f"{self._tenant(tenant)}/apps", body=body)
        return from_document(AppReport, {**answer, "plan": SyncPlan.from_dict(answer["plan"])})

    def uninstall_app(self, scope: Scope, *, actor: str, dry_run: bool = False) -> AppReport:
        """DELETE …/apps/{stack}/{environment}."""
        path = (
            f"{self._tenant(scope.tenant)}/apps/{segment(scope.stack)}/{segment(scope.environment)}"
        )
        answer = self._request("DELETE", path, params={"dry_run": dry_run})
        return from_document(AppReport, {**answer, "plan": SyncPlan.from_dict(answer["plan"])})
