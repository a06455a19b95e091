"""The audit log, read: a tenant's events, newest first (SPEC §9), and its export.

Writing happens inside each use case's own transaction (`store.events`);
`list` reads all of a tenant's events newest first, which the API and CLI
page through. The tenant is required: no call reads across tenants.

`export` reads them forward for a compliance store (issue 38; core.audit):
oldest first from `since`, resumable after any record's id. Resuming skips
nothing and repeats nothing because a page never passes an event younger than
`SETTLE` seconds: a transaction still open may yet commit a lower id (the rule
the alert loop's ledger read keeps, service.alerting), so the page stops before
the first such event and `next` is None: what is recorded later comes to an
export resumed after the last record. The export reads the primary, never a
replica that may lag (Context.listing).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Final
from uuid import UUID

from cronplane.core.audit import AuditPage, AuditRecord, audit_query, widened
from cronplane.core.queries import check_limit
from cronplane.core.redact import redact_text, redact_value
from cronplane.core.validation import validate_name
from cronplane.events import AUDIT_KINDS, Event
from cronplane.service.base import ServiceBase
from cronplane.store.events import OUT_OF_ORDER, export_rows, first_id_at, list_events

SETTLE: Final = 2.0  # seconds an event must be old before an export passes it


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

    def export(
        self,
        tenant: str,
        *,
        since: str | None = None,
        until: str | None = None,
        after: int | None = None,
        kind: str = "all",
        limit: int = 1000,
    ) -> AuditPage:
        """Up to `limit` of `tenant`'s events of `kind` recorded in [since, until), oldest
        first, after the cursor `after` (a record's id); InvalidAuditQuery for bad input."""
        validate_name(tenant, "tenant")
        now = self.clock.now()
        query = audit_query(
            since=since,
            until=until,
            after=after,
            kind=kind,
            limit=limit,
            now=now,
            kinds_of=AUDIT_KINDS,
        )
        with self._read() as conn:
            # The window's ids (store.events.OUT_OF_ORDER); membership is still by time.
            low = 1 if query.after is None else query.after + 1
            start = None if query.since is None else widened(query.since, -OUT_OF_ORDER)
            if start is not None:
                low = first_id_at(conn, tenant, start, low)
            end = None if query.until is None else widened(query.until, OUT_OF_ORDER)
            high = None if end is None else first_id_at(conn, tenant, end, low)
            rows = export_rows(
                conn,
                tenant=tenant,
                low=low,
                high=high,
                since=query.since,
                until=query.until,
                codes=query.codes,
                limit=query.limit,
            )
        settled = now - timedelta(seconds=SETTLE)
        records: list[AuditRecord] = []
        for event, job in rows:
            if event.created_at > settled:
                return AuditPage(tuple(records), None)  # caught up: resume later
            records.append(record_of(event, job))
        full = len(records) == query.limit
        return AuditPage(tuple(records), records[-1].id if full else None)


def record_of(event: Event, job: str | None) -> AuditRecord:
    """An event as an export ships it: its kind, its job, credentials masked."""
    named = event.detail.get("job")
    return AuditRecord(
        id=event.id,
        at=event.created_at,
        kind=AUDIT_KINDS.get(event.code, "system"),
        code=event.code,
        actor=event.actor,
        tenant=event.tenant,
        stack=event.stack,
        environment=event.environment,
        schedule_id=event.schedule_id,
        schedule_name=event.schedule_name,
        job=job if job is not None else named if isinstance(named, str) else None,
        item_id=event.item_id,
        scheduled_for=event.scheduled_for,
        message=redact_text(event.message),
        detail=redact_value(event.detail),
    )
