"""The audit export over the HTTP API (api/audit.py): the local service's answer
(service.audit.AuditLog.export), decoded with the codec."""

from __future__ import annotations

from cronplane.client.http import RemoteHTTP
from cronplane.core.audit import AuditPage
from cronplane.core.codec import from_document


class RemoteAudit(RemoteHTTP):
    """A tenant's events oldest first, one page per call."""

    def export_audit(
        self,
        tenant: str,
        *,
        since: str | None = None,
        until: str | None = None,
        after: int | None = None,
        kind: str = "all",
        limit: int = 1000,
    ) -> AuditPage:
        """GET …/audit."""
        params = {"since": since, "until": until, "after": after, "kind": kind, "limit": limit}
        answer = self._request("GET", f"{self._tenant(tenant)}/audit", params=params)
        return from_document(AuditPage, answer)
