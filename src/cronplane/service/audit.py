"""The audit log, read: a tenant's events, newest first (SPEC §9).

Writing happens inside each use case's own transaction (`store.events`);
this is the one read use case over all of a tenant's events, which the API
and CLI page through. The tenant is required: no call reads across tenants.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from cronplane.core.queries import check_limit
from cronplane.core.validation import validate_name
from cronplane.events import Event
from cronplane.service.base import ServiceBase
from cronplane.store.events import list_events


class AuditLog(ServiceBase):
    """Read a tenant's events."""

    def list(
        self,
        tenant: str,
        *,
        codes: Sequence[str] | None = None,
        schedule_id: UUID | None = None,
        before_id: int | None = None,
        limit: int = 100,
    ) -> list[Event]:
        """Up to `limit` events of `tenant`, newest first; `before_id` pages backwards."""
        validate_name(tenant, "tenant")
        check_limit(limit)
        with self._listing() as conn:
            return list_events(
                conn,
                tenant=tenant,
                schedule_id=schedule_id,
                codes=list(codes) if codes else None,
                before_id=before_id,
                limit=limit,
            )
