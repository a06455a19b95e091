"""The remote client's alert methods (`RemoteService` inherits them): channels,
rules and alerts over `/api/v1/tenants/{tenant}/alert-…` (docs/alerts.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any
from uuid import UUID

from cronplane.client_http import RemoteHTTP, segment
from cronplane.core.alerts import Alert, AlertRule, Channel, RuleSpec
from cronplane.core.codec import from_document


class RemoteAlerts(RemoteHTTP):
    """Alert use cases over the HTTP API."""

    @staticmethod
    def _at(tenant: str, tail: str) -> str:
        return f"/tenants/{segment(tenant)}/{tail}"

    def add_alert_channel(
        self,
        tenant: str,
        name: str,
        kind: str,
        config: Mapping[str, Any],
        *,
        secret: str | None,
        actor: str,
    ) -> Channel:
        """POST …/alert-channels."""
        body = {"name": name, "kind": kind, "config": dict(config), "secret": secret}
        return from_document(
            Channel, self._request("POST", self._at(tenant, "alert-channels"), body=body)
        )

    def list_alert_channels(self, tenant: str) -> list[Channel]:
        """GET …/alert-channels."""
        answer = self._request("GET", self._at(tenant, "alert-channels"))
        return [from_document(Channel, row) for row in answer["items"]]

    def remove_alert_channel(self, tenant: str, name: str, *, actor: str) -> Channel:
        """DELETE …/alert-channels/{name}."""
        path = self._at(tenant, f"alert-channels/{segment(name)}")
        return from_document(Channel, self._request("DELETE", path))

    def add_alert_rule(self, tenant: str, spec: RuleSpec, *, actor: str) -> AlertRule:
        """POST …/alert-rules."""
        body = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(spec).items()}
        answer = self._request("POST", self._at(tenant, "alert-rules"), body=body)
        return from_document(AlertRule, answer)

    def list_alert_rules(self, tenant: str) -> list[AlertRule]:
        """GET …/alert-rules."""
        answer = self._request("GET", self._at(tenant, "alert-rules"))
        return [from_document(AlertRule, row) for row in answer["items"]]

    def remove_alert_rule(self, tenant: str, name: str, *, actor: str) -> AlertRule:
        """DELETE …/alert-rules/{name}."""
        path = self._at(tenant, f"alert-rules/{segment(name)}")
        return from_document(AlertRule, self._request("DELETE", path))

    def list_alerts(
        self, tenant: str, *, status: str | None = None, limit: int = 100
    ) -> list[Alert]:
        """GET …/alerts."""
        params = {"status": status, "limit": limit}
        answer = self._request("GET", self._at(tenant, "alerts"), params=params)
        return [from_document(Alert, row) for row in answer["items"]]

    def ack_alert(self, tenant: str, alert_id: UUID, *, actor: str) -> Alert:
        """POST …/alerts/{id}/ack."""
        path = self._at(tenant, f"alerts/{alert_id}/ack")
        return from_document(Alert, self._request("POST", path))
