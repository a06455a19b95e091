"""The remote client's runs, queue items and tenants (`RemoteService` inherits them)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from cronplane.client.http import RemoteHTTP
from cronplane.clock import poll
from cronplane.core.codec import from_document
from cronplane.core.items import WAIT_POLL
from cronplane.core.model import QueueItem, Scope
from cronplane.core.quotas import Usage, quota_change, usage_from_dict
from cronplane.service.run_logs import RunLog, run_log_from_document


class RemoteQueue(RemoteHTTP):
    """Run now, wait, queue items and tenant quotas over the HTTP API."""

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
        return poll(
            lambda: self.get_item(tenant, item_id),
            lambda item: item.finished,
            self.clock,
            every=WAIT_POLL,
            timeout=timeout,
        )

    def get_item(self, tenant: str, item_id: UUID) -> QueueItem:
        """GET one queue item."""
        path = f"{self._tenant(tenant)}/queue/items/{item_id}"
        return from_document(QueueItem, self._request("GET", path))

    def item_logs(self, tenant: str, item_id: UUID) -> RunLog:
        """GET one item with its attempts, their output, and its events."""
        path = f"{self._tenant(tenant)}/queue/items/{item_id}/logs"
        return run_log_from_document(self._request("GET", path))

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
