"""`Client`: cronplane's public Python client, and its `jobs`, `runs`, `alerts` and `audit`.

A face over one `RemoteService` (client.remote), the same request code the
remote CLI runs: this module builds arguments and never speaks HTTP itself.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any
from uuid import UUID

import httpx

from cronplane.client.http import DEFAULT_TIMEOUT
from cronplane.client.promotion import Environments
from cronplane.client.remote import RemoteService
from cronplane.client.schedules import ACTOR, Schedules
from cronplane.core.alerts import DEFAULT_RENOTIFY, Alert, AlertRule, Channel, RuleSpec, ScopeKind
from cronplane.core.audit import ALL, AuditPage, AuditRecord
from cronplane.core.choices import JobStatus
from cronplane.core.inputs import UNSET, JobPatch, JobSpec, Unset
from cronplane.core.job_versions import JobVersion
from cronplane.core.model import DEFAULT_SCOPE_PART, Job, QueueItem, Scope
from cronplane.service import JobRollback, JobVersionDiff
from cronplane.service.run_logs import RunLog


class Jobs:
    """The jobs of one tenant and stack (`client.jobs`)."""

    def __init__(self, service: RemoteService, scope: Scope) -> None:
        self._service = service
        self._scope = scope

    def register(
        self,
        name: str,
        target: str,
        *,
        title: str = "",
        kind: str | None = None,
        payload: dict[str, Any] | None = None,
        payload_schema: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        status: JobStatus = "active",
        labels: dict[str, str] | None = None,
    ) -> Job:
        """Register a job that runs `target` (`python:module:function`, `webhook:URL`, …;
        docs/targets.md). JobExists when the stack already has one of that name."""
        spec = JobSpec(
            name=name,
            target=target,
            title=title,
            kind=kind,
            payload=payload or {},
            payload_schema=payload_schema,
            options=options or {},
            status=status,
            labels=labels or {},
        )
        return self._service.register_job(self._scope.tenant, self._scope.stack, spec, actor=ACTOR)

    def get(self, name: str) -> Job:
        """The job `name` (JobNotFound when there is none)."""
        return self._service.get_job(self._scope.tenant, self._scope.stack, name)

    def list(
        self,
        *,
        all_stacks: bool = False,
        status: JobStatus | None = None,
        selector: str | None = None,
    ) -> builtins.list[Job]:
        """The stack's jobs (every stack's with `all_stacks`), `status` ones only if given,
        the ones whose labels `selector` selects if given."""
        stack = None if all_stacks else self._scope.stack
        return self._service.list_jobs(self._scope.tenant, stack, status=status, selector=selector)

    def update(
        self,
        name: str,
        *,
        revision: int | None = None,
        title: str | Unset = UNSET,
        target: str | Unset = UNSET,
        kind: str | Unset = UNSET,
        payload: dict[str, Any] | Unset = UNSET,
        payload_schema: dict[str, Any] | Unset | None = UNSET,
        options: dict[str, Any] | Unset = UNSET,
        status: JobStatus | Unset = UNSET,
        labels: dict[str, str] | Unset = UNSET,
    ) -> Job:
        """Change the fields given (`payload_schema=None` clears the schema)."""
        patch = JobPatch(
            title=title,
            target=target,
            kind=kind,
            payload=payload,
            payload_schema=payload_schema,
            options=options,
            status=status,
            labels=labels,
        )
        return self._service.update_job(
            self._scope.tenant, self._scope.stack, name, patch, actor=ACTOR, revision=revision
        )

    def deactivate(self, name: str, *, revision: int | None = None) -> Job:
        """Mark the job inactive: its schedules' fires are skipped, new schedules refused."""
        return self._service.deactivate_job(
            self._scope.tenant, self._scope.stack, name, actor=ACTOR, revision=revision
        )

    def versions(
        self, name: str, *, limit: int = 100, before: int | None = None
    ) -> builtins.list[JobVersion]:
        """The job's versions, newest first (`before`: a version number, for the next page)."""
        s = self._scope
        return self._service.list_job_versions(s.tenant, s.stack, name, limit=limit, before=before)

    def diff(
        self, name: str, first: int | None = None, second: int | None = None
    ) -> JobVersionDiff:
        """Version `first` against `second` (default: the previous against the current)."""
        return self._service.diff_job_versions(
            self._scope.tenant, self._scope.stack, name, first, second
        )

    def rollback(
        self,
        name: str,
        *,
        to: int,
        dry_run: bool = False,
        reason: str | None = None,
        revision: int | None = None,
    ) -> JobRollback:
        """Make the job's definition version `to`'s again (a new version, via rollback)."""
        s = self._scope
        return self._service.rollback_job(
            s.tenant, s.stack, name, to=to, actor=ACTOR, revision=revision, dry_run=dry_run,
            reason=reason,
        )  # fmt: skip


class Runs:
    """A tenant's runs: its queue items (`client.runs`; start one with `schedules.run`)."""

    def __init__(self, service: RemoteService, tenant: str) -> None:
        self._service = service
        self._tenant = tenant

    def get(self, item_id: UUID | str) -> QueueItem:
        """One run (QueueItemNotFound when the tenant has none of that id)."""
        return self._service.get_item(self._tenant, UUID(str(item_id)))

    def logs(self, item_id: UUID | str) -> RunLog:
        """One run with its attempts (their timings, errors and output) and its events."""
        return self._service.item_logs(self._tenant, UUID(str(item_id)))

    def list(
        self,
        *,
        status: str | None = None,
        schedule_id: UUID | None = None,
        limit: int = 100,
    ) -> builtins.list[QueueItem]:
        """The newest runs, `status` (queued, running, succeeded, failed, …) or one
        schedule's (its `id`) only if given."""
        return self._service.list_items(
            self._tenant, status=status, schedule_id=schedule_id, limit=limit
        )

    def cancel(self, item_id: UUID | str) -> QueueItem:
        """Cancel a queued run, or ask a running one to stop (ItemFinished when it ended)."""
        return self._service.cancel_item(self._tenant, UUID(str(item_id)), actor=ACTOR)

    def wait(self, item_id: UUID | str, *, timeout: float | None = None) -> QueueItem:
        """Poll the run until it finished, or `timeout` seconds passed (then as it is)."""
        return self._service.wait(self._tenant, UUID(str(item_id)), timeout=timeout)


class Alerts:
    """A tenant's alerts, alert rules and channels (`client.alerts`; docs/alerts.md)."""

    def __init__(self, service: RemoteService, tenant: str) -> None:
        self._service = service
        self._tenant = tenant

    def list(self, *, status: str | None = None, limit: int = 100) -> builtins.list[Alert]:
        """The newest alerts, `open` or `closed` ones only if given."""
        return self._service.list_alerts(self._tenant, status=status, limit=limit)

    def ack(self, alert_id: UUID | str) -> Alert:
        """Acknowledge an alert (it stays open until its condition clears)."""
        return self._service.ack_alert(self._tenant, UUID(str(alert_id)), actor=ACTOR)

    def add_rule(
        self,
        name: str,
        condition: str,
        *,
        channels: Sequence[str] = (),
        scope: str | None = None,
        stack: str | None = None,
        environment: str | None = None,
        target: str | None = None,
        threshold: int | None = None,
        reasons: Sequence[str] = (),
        renotify: int = DEFAULT_RENOTIFY,
        selector: str | None = None,
    ) -> AlertRule:
        """Add a rule: `condition` (docs/alerts.md) over the tenant, or over part of it
        with `scope` and `stack`/`environment`/`target`, or over the schedules whose
        labels match `selector` (scope `selector`, inferred), notifying `channels`."""
        inferred = ScopeKind.SELECTOR if selector is not None else ScopeKind.TENANT
        spec = RuleSpec(
            name=name,
            condition=condition,
            scope=scope or inferred.value,
            stack=stack,
            environment=environment,
            target=target,
            threshold=threshold,
            reasons=tuple(reasons),
            channels=tuple(channels),
            renotify=renotify,
            selector=selector,
        )
        return self._service.add_alert_rule(self._tenant, spec, actor=ACTOR)

    def rules(self) -> builtins.list[AlertRule]:
        """The tenant's alert rules."""
        return self._service.list_alert_rules(self._tenant)

    def remove_rule(self, name: str) -> AlertRule:
        """Delete a rule; returns it as it was."""
        return self._service.remove_alert_rule(self._tenant, name, actor=ACTOR)

    def add_channel(
        self, name: str, kind: str, config: Mapping[str, Any], *, secret: str | None = None
    ) -> Channel:
        """Add a channel (`webhook`, `slack`, `email`, …) rules can notify."""
        return self._service.add_alert_channel(
            self._tenant, name, kind, config, secret=secret, actor=ACTOR
        )

    def channels(self) -> builtins.list[Channel]:
        """The tenant's channels."""
        return self._service.list_alert_channels(self._tenant)

    def remove_channel(self, name: str) -> Channel:
        """Delete a channel; returns it as it was."""
        return self._service.remove_alert_channel(self._tenant, name, actor=ACTOR)


def _when(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


class Audit:
    """A tenant's audit export (`client.audit`): its events oldest first, resumable."""

    def __init__(self, service: RemoteService, tenant: str) -> None:
        self._service = service
        self._tenant = tenant

    def page(
        self,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        after: int | None = None,
        kind: str = ALL,
        limit: int = 1000,
    ) -> AuditPage:
        """One page: records recorded in [since, until) after the cursor `after`, oldest
        first; `since`/`until` an aware datetime, an ISO 8601 text or a duration ago
        (`24h`); `kind` changes, runs, alerts, system or all (docs/api.md)."""
        return self._service.export_audit(
            self._tenant,
            since=_when(since),
            until=_when(until),
            after=after,
            kind=kind,
            limit=limit,
        )

    def export(
        self,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        after: int | None = None,
        kind: str = ALL,
        page_size: int = 1000,
    ) -> Iterator[AuditRecord]:
        """Every record that is ready, page by page (one page held at a time); resume
        later with `after=` the last record's `id`."""
        while True:
            found = self.page(since=since, until=until, after=after, kind=kind, limit=page_size)
            yield from found.records
            if found.next is None:
                return
            after = found.next


class Client:
    """A cronplane server's API for one tenant, stack and environment.

    `Client(url, token, tenant="acme")`; `token` is an API token (`cronplane token
    create`), None for a server that asks none. Resources: `schedules` (with the
    controls and run now), `jobs`, `runs` (queue items), `alerts`, `audit` (the export
    of its events), `environments` (diff and promote). Close it, or use it as a context
    manager; `scoped()` gives a client of another stack or environment over the same
    connections.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        tenant: str = DEFAULT_SCOPE_PART,
        stack: str = DEFAULT_SCOPE_PART,
        environment: str = DEFAULT_SCOPE_PART,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        service = RemoteService(url, token, timeout=timeout, transport=transport)
        self._bind(service, Scope(tenant, stack, environment))

    @classmethod
    def over(cls, service: RemoteService, scope: Scope) -> Client:
        """A client over an existing `RemoteService` (its connections, its token)."""
        client = cls.__new__(cls)
        client._bind(service, scope)
        return client

    def _bind(self, service: RemoteService, scope: Scope) -> None:
        self.service = service
        self.scope = scope
        self.schedules = Schedules(service, scope)
        self.jobs = Jobs(service, scope)
        self.runs = Runs(service, scope.tenant)
        self.alerts = Alerts(service, scope.tenant)
        self.environments = Environments(service, scope.tenant, ACTOR)
        self.audit = Audit(service, scope.tenant)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.service.url

    def scoped(
        self,
        *,
        tenant: str | None = None,
        stack: str | None = None,
        environment: str | None = None,
    ) -> Client:
        """A client of another tenant, stack or environment sharing these connections."""
        scope = Scope(
            tenant or self.scope.tenant,
            stack or self.scope.stack,
            environment or self.scope.environment,
        )
        return Client.over(self.service, scope)

    def close(self) -> None:
        """Close the connections (a `scoped()` client shares them: close once)."""
        self.service.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
