"""The remote client: the service's methods, over the HTTP API.

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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote
from uuid import UUID

import httpx

from cronplane.client_alerts import RemoteAlerts
from cronplane.clock import Clock, SystemClock
from cronplane.core.codec import encode_value, from_document, to_document
from cronplane.core.model import (
    CronDeclaration,
    Declared,
    Job,
    JobSpec,
    Page,
    QueueItem,
    Schedule,
    SchedulePatch,
    ScheduleSpec,
    Scope,
)
from cronplane.core.quotas import Usage, quota_change, usage_from_dict
from cronplane.core.reconcile import (
    Drift,
    PlannedCreate,
    PlannedRemove,
    PlannedUpdate,
    SyncConflict,
    SyncPlan,
)
from cronplane.errors import CronplaneError, InternalError, Unavailable
from cronplane.events import Event
from cronplane.manifest import Manifest
from cronplane.service import AppReport, BackfillReport

API_PREFIX: Final = "/api/v1"
DEFAULT_TIMEOUT: Final = 30.0
NIL: Final = UUID(int=0)
WAIT_POLL: Final = 0.25


def _error_classes() -> dict[str, type[CronplaneError]]:
    found: dict[str, type[CronplaneError]] = {}
    pending: list[type[CronplaneError]] = [CronplaneError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        code = cls.__dict__.get("code")
        if code is not None:
            found[code.text] = cls
    return found


ERRORS: Final = _error_classes()


def raise_for(response: httpx.Response) -> None:
    """Raise the coded error an answer carries (the same class the service raised)."""
    if response.is_success:
        return
    try:
        body = response.json()
        code, message, detail = body["code"], body["message"], body.get("detail") or {}
    except (ValueError, KeyError, TypeError):
        raise InternalError(
            f"unexpected answer from the server: HTTP {response.status_code}",
            {"status": response.status_code},
        ) from None
    cls = ERRORS.get(code)
    if cls is None:
        raise InternalError(f"{code}: {message}", {"status": response.status_code, **detail})
    raise cls(message, detail)


def _seg(value: str) -> str:
    return quote(value, safe="")


def plan_from_json(d: Mapping[str, Any]) -> SyncPlan:
    """A SyncPlan from the API's plan document (row ids are not sent: nil UUIDs)."""
    declared = {
        name: from_document(Declared, value) for name, value in d.get("declared", {}).items()
    }

    def declaration(name: str) -> Declared:
        return declared.get(name) or Declared("", "", "UTC", {}, None, "skip")

    def changes(item: Mapping[str, Any]) -> dict[str, Any]:
        wanted = declaration(item["name"])
        return {field: getattr(wanted, field, None) for field in item["fields"]}

    return SyncPlan(
        created=tuple(PlannedCreate(name, declaration(name)) for name in d["created"]),
        updated=tuple(
            PlannedUpdate(item["name"], NIL, 0, declaration(item["name"]), changes(item))
            for item in d["updated"]
        ),
        removed=tuple(PlannedRemove(name, NIL) for name in d["removed"]),
        unchanged=tuple(d["unchanged"]),
        conflicts=tuple(from_document(SyncConflict, c) for c in d["conflicts"]),
        drift=tuple(from_document(Drift, x) for x in d["drift"]),
    )


def report_from_json(d: Mapping[str, Any]) -> AppReport:
    """An AppReport from the API's JSON (its plan in the plan document's shape)."""
    return from_document(AppReport, {**d, "plan": plan_from_json(d["plan"])})


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


class RemoteService(RemoteAlerts):
    """The use cases the CLI needs, answered by a cronplane server."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.url = url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    # -- plumbing --------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        revision: int | None = None,
    ) -> Any:
        headers = {} if revision is None else {"If-Match": f'"{revision}"'}
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        try:
            response = self.http.request(
                method,
                API_PREFIX + path,
                content=None if body is None else json.dumps(body),
                headers={**headers, **({"Content-Type": "application/json"} if body else {})},
                params=query,
            )
        except httpx.HTTPError as error:
            raise Unavailable(
                f"cannot reach the cronplane server at {self.url}: {error}", {"url": self.url}
            ) from error
        raise_for(response)
        return response.json()

    @staticmethod
    def _tenant(tenant: str) -> str:
        return f"/tenants/{_seg(tenant)}"

    def _schedule(self, scope: Scope, name: str) -> str:
        return (
            f"{self._tenant(scope.tenant)}/schedules/"
            f"{_seg(scope.stack)}/{_seg(scope.environment)}/{_seg(name)}"
        )

    # -- schedules --------------------------------------------------------------

    def create_schedule(self, scope: Scope, spec: ScheduleSpec, *, actor: str) -> Schedule:
        """POST a new user schedule."""
        body = {**_given(spec), "stack": scope.stack, "environment": scope.environment}
        answer = self._request("POST", f"{self._tenant(scope.tenant)}/schedules", body=body)
        return from_document(Schedule, answer)

    def get_schedule(self, scope: Scope, name: str) -> Schedule:
        """GET one schedule."""
        return from_document(Schedule, self._request("GET", self._schedule(scope, name)))

    def list_schedules(
        self,
        tenant: str,
        *,
        stack: str | None = None,
        environment: str | None = None,
        source: str | None = None,
        enabled: bool | None = None,
        job: str | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> Page:
        """GET one page of schedules."""
        params = {
            "stack": stack,
            "environment": environment,
            "source": source,
            "enabled": enabled,
            "job": job,
            "cursor": cursor,
            "limit": limit,
        }
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
    ) -> Schedule:
        """POST …/pause with {until, note}."""
        path = self._schedule(scope, name) + "/pause"
        body = {"until": until, "note": note}
        return from_document(Schedule, self._request("POST", path, body=body, revision=revision))

    def resume_schedule(
        self, scope: Scope, name: str, *, actor: str, revision: int | None = None
    ) -> Schedule:
        """POST …/resume."""
        path = self._schedule(scope, name) + "/resume"
        return from_document(Schedule, self._request("POST", path, revision=revision))

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
        self, tenant: str, stack: str | None = None, *, status: str | None = None
    ) -> list[Job]:
        """GET the tenant's jobs."""
        params = {"stack": stack, "status": status}
        answer = self._request("GET", f"{self._tenant(tenant)}/jobs", params=params)
        return [from_document(Job, row) for row in answer["items"]]

    def register_job(self, tenant: str, stack: str, spec: JobSpec, *, actor: str) -> Job:
        """POST a new job."""
        body = {**_given(spec), "stack": stack}
        return from_document(Job, self._request("POST", f"{self._tenant(tenant)}/jobs", body=body))

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
        return plan_from_json(answer["plan"])

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
        return report_from_json(answer)

    def uninstall_app(self, scope: Scope, *, actor: str, dry_run: bool = False) -> AppReport:
        """DELETE …/apps/{stack}/{environment}."""
        path = f"{self._tenant(scope.tenant)}/apps/{_seg(scope.stack)}/{_seg(scope.environment)}"
        answer = self._request("DELETE", path, params={"dry_run": dry_run})
        return report_from_json(answer)

    # -- runs and the queue ----------------------------------------------------------

    def run_now(
        self, scope: Scope, name: str, *, actor: str, payload: dict[str, Any] | None = None
    ) -> QueueItem:
        """POST …/run (with `{"payload": …}` when this run's payload is overridden)."""
        path = self._schedule(scope, name) + "/run"
        body = None if payload is None else {"payload": payload}
        return from_document(QueueItem, self._request("POST", path, body=body))

    def wait(self, tenant: str, item_id: UUID, *, timeout: float | None = None) -> QueueItem:
        """Poll the item until it finished (or `timeout` passed), as RunService.wait."""
        started = self.clock.monotonic()
        while True:
            item = self.get_item(tenant, item_id)
            if item.finished:
                return item
            if timeout is not None and self.clock.monotonic() - started >= timeout:
                return item
            self.clock.wait(WAIT_POLL)

    def get_item(self, tenant: str, item_id: UUID) -> QueueItem:
        """GET one queue item."""
        path = f"{self._tenant(tenant)}/queue/items/{item_id}"
        return from_document(QueueItem, self._request("GET", path))

    def list_items(
        self,
        tenant: str,
        *,
        status: str | None = None,
        schedule_id: UUID | None = None,
        limit: int = 100,
    ) -> list[QueueItem]:
        """GET the tenant's queue items."""
        params = {"status": status, "schedule_id": schedule_id, "limit": limit}
        answer = self._request("GET", f"{self._tenant(tenant)}/queue/items", params=params)
        return [from_document(QueueItem, row) for row in answer["items"]]

    def cancel_item(self, tenant: str, item_id: UUID, *, actor: str) -> QueueItem:
        """POST …/cancel (the server records the token's actor)."""
        path = f"{self._tenant(tenant)}/queue/items/{item_id}/cancel"
        return from_document(QueueItem, self._request("POST", path))

    # -- tenants (platform tokens only) --------------------------------------------

    def list_tenants(self) -> list[Usage]:
        """GET /tenants."""
        return [usage_from_dict(row) for row in self._request("GET", "/tenants")["items"]]

    def tenant_usage(self, tenant: str) -> Usage:
        """GET /tenants/{tenant}."""
        return usage_from_dict(self._request("GET", self._tenant(tenant)))

    def set_quota(
        self,
        tenant: str,
        limits: dict[str, Any],
        *,
        clear: tuple[str, ...] = (),
        actor: str,
    ) -> Usage:
        """PATCH /tenants/{tenant}/quota (null clears a limit; the token is the actor)."""
        body = quota_change(limits, clear)
        return usage_from_dict(self._request("PATCH", f"{self._tenant(tenant)}/quota", body=body))


def _param(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, UUID):
        return str(value)
    return value
