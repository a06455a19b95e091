"""Event kinds (codes) and the frozen Event record.

Events are append-only audit rows: every change with its actor, and every due
occurrence with its outcome (the occurrence ledger, SPEC §6). Normal events
are `V…`; events that record a failure keep an `X…` code with a 2xx status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from cronplane.codes import Code, declare


def _event(text: str, summary: str) -> Code:
    return declare(text, summary, "event")


# The occurrence ledger: one of these for every due occurrence.
SCHEDULE_FIRED = _event("V200610SCHTRG", "schedule fired, job enqueued (detail: coalesced count)")
SKIPPED_OVERLAP = _event(
    "V200620SKPOVL", "occurrence skipped: previous item still queued or running"
)
SKIPPED_MISFIRE = _event("V200621SKPMIS", "occurrence skipped: later than its misfire grace")
JOB_MISSING = _event(
    "X200901JOBMIS", "occurrence not fired: job missing or inactive; next_run advanced"
)
NEXT_RUN_FAILED = _event("X200900SCHCAL", "next-run computation failed; row disabled")
SKIPPED_PAUSED = _event(
    "V200100SKPPAU", "occurrence skipped: schedule paused (detail: note, paused_by, until)"
)
SKIPPED_QUOTA = _event(
    "V200400SKPQTA",
    "occurrence skipped: its tenant's fire-time quota is used (detail: limit, value)",
)
SKIPPED_EXCLUDED = _event(
    "V200360SKPCAL",
    "occurrence skipped: a calendar the schedule excludes names its day (detail: calendar, why)",
)
SCHEDULE_ENDED = _event(
    "V200150SCHEND",
    "schedule ended: no occurrence left (end_at passed, max_runs used, one-off done); "
    "next_run null, still enabled (detail: reason)",
)

# Changes, each with its actor.
SCHEDULE_CREATED = _event("V201001SCHCRT", "schedule created")
SCHEDULE_UPDATED = _event("V200002SCHUPD", "schedule updated")
SCHEDULE_REMOVED = _event("V200003SCHDEL", "schedule removed")
SCHEDULE_ENABLED = _event("V200004SCHENA", "schedule enabled")
SCHEDULE_DISABLED = _event("V200005SCHDIS", "schedule disabled")
SCHEDULE_RESET = _event("V200006SCHRST", "app schedule reset to its manifest")
SCHEDULE_ROLLED_BACK = _event(
    "V200380SCHRBK", "schedule rolled back to an earlier version (detail: to, fields)"
)
SCHEDULE_RESTORED = _event(
    "V201381SCHRSD", "deleted schedule restored from its last version (detail: version)"
)
SCHEDULE_PROMOTED = _event(
    "V200382SCHPRM",
    "schedule's definition promoted from another environment (detail: from, fields, changes)",
)
SCHEDULE_PAUSED = _event("V200101SCHPAU", "schedule paused (detail: note, until, missed)")
SCHEDULE_RESUMED = _event(
    "V200102SCHRES", "schedule resumed by an operator, or at its until with a missed policy"
)
BACKFILL_ENQUEUED = _event(
    "V202103BKFENQ", "backfill: items enqueued for past occurrences (detail: counts)"
)
SCHEDULE_RUN_NOW = _event("V202007SCHRUN", "schedule run now: item enqueued by hand")
JOB_REGISTERED = _event("V201008JOBREG", "job registered")
JOB_UPDATED = _event("V200009JOBUPD", "job updated")
JOB_DEACTIVATED = _event("V200010JOBDEA", "job deactivated")
JOB_ROLLED_BACK = _event(
    "V200384JOBRBK", "job rolled back to an earlier version (detail: to, fields)"
)
APP_SYNCED = _event("V200011APPSYN", "app sync applied (detail: the plan)")

TENANT_QUOTA_SET = _event(
    "V200401QTASET", "a tenant's quota set or cleared by a platform admin (detail: changes)"
)

# Queue items.
ITEM_SUCCEEDED = _event("V200030ITMSUC", "queue item succeeded")
ITEM_FAILED = _event("X200031ITMFAI", "queue item failed after its last attempt")
ITEM_RETRY = _event("V200032ITMRTY", "queue item failed; retry scheduled")
ITEM_EXPIRED = _event("X200033ITMEXP", "queue item expired before it finished")

# Run controls: cancellation and timeouts (docs/controls.md).
ITEM_CANCELLED = _event("V200200ITMCAN", "queue item cancelled (detail: by whom; was it running)")
ITEM_CANCEL_REQUESTED = _event(
    "V200201ITMCRQ", "running queue item asked to stop; its worker stops it and records cancelled"
)
ITEM_TIMED_OUT = _event("X200202ITMTMO", "queue item ran past its timeout (an attempt used)")

# Leadership.
LEADER_ACQUIRED = _event("V200040LEADAC", "dispatcher took the lease (new term)")
LEADER_RELEASED = _event(
    "V200041LEADRL", "dispatcher gave its shard's lease back: over its fair share of shards"
)

# Shards (store.tenant_moves): a tenant's rows leave one shard and reach another.
TENANT_MOVED_OUT = _event(
    "V200420TENOUT", "tenant moved to another shard: its rows left here (detail: to, epoch, rows)"
)
TENANT_MOVED_IN = _event(
    "V200421TENMIN", "tenant moved here from another shard (detail: from, epoch, rows)"
)

# Alerts (cronplane.alerting).
ALERT_OPENED = _event("X200300ALTOPN", "alert opened: a rule's condition holds on a schedule")
ALERT_RECOVERED = _event("V200301ALTREC", "alert closed: its condition cleared")
ALERT_ACKED = _event("V200302ALTACK", "alert acknowledged")
ALERT_SENT = _event("V200303ALTSNT", "alert notification delivered on a channel")
ALERT_UNSENT = _event("X200304ALTDLF", "alert notification attempt failed (retried by the queue)")
ALERT_RULE_CREATED = _event("V201305ALRCRT", "alert rule created")
ALERT_RULE_REMOVED = _event("V200306ALRDEL", "alert rule removed")
CHANNEL_CREATED = _event("V201307CHNCRT", "alert channel created")
CHANNEL_REMOVED = _event("V200308CHNDEL", "alert channel removed")
CALENDAR_SAVED = _event("V200361CALSAV", "business calendar created or changed")
CALENDAR_REMOVED = _event("V200362CALDEL", "business calendar removed")

# Tokens.
TOKEN_CREATED = _event("V201050TOKCRT", "API token created")
TOKEN_REVOKED = _event("V200051TOKREV", "API token revoked")


@dataclass(frozen=True, slots=True)
class Event:
    """One audit row as read back from the store."""

    id: int
    code: str
    tenant: str
    stack: str | None
    environment: str | None
    schedule_id: UUID | None
    schedule_name: str | None
    item_id: UUID | None
    actor: str
    message: str
    scheduled_for: datetime | None
    fired_at: datetime | None
    created_at: datetime
    detail: dict[str, Any] = field(default_factory=dict)


def _kind(kind: str, *codes: Code) -> dict[str, str]:
    return {code.text: kind for code in codes}


# What an audit export (`cronplane audit export --kind`, core.audit) files each code
# under. `changes`: definitions and what operators and the platform did (who paused,
# rolled back, cancelled, made a token). `runs`: the occurrence ledger and each queue
# item's outcomes (a run now is a ledger row; a cancel *request* is an operator's, the
# item's `cancelled` its outcome). `alerts`: what the alert loop observed and sent.
# `system`: the platform's own (leadership, in the `_system` tenant). Every event code
# has exactly one (tests/service/test_audit_export.py).
AUDIT_KINDS: dict[str, str] = {
    **_kind(
        "changes",
        SCHEDULE_CREATED,
        SCHEDULE_UPDATED,
        SCHEDULE_REMOVED,
        SCHEDULE_ENABLED,
        SCHEDULE_DISABLED,
        SCHEDULE_RESET,
        SCHEDULE_ROLLED_BACK,
        SCHEDULE_RESTORED,
        SCHEDULE_PROMOTED,
        SCHEDULE_PAUSED,
        SCHEDULE_RESUMED,
        BACKFILL_ENQUEUED,
        ITEM_CANCEL_REQUESTED,
        JOB_REGISTERED,
        JOB_UPDATED,
        JOB_DEACTIVATED,
        JOB_ROLLED_BACK,
        APP_SYNCED,
        TENANT_QUOTA_SET,
        ALERT_ACKED,
        ALERT_RULE_CREATED,
        ALERT_RULE_REMOVED,
        CHANNEL_CREATED,
        CHANNEL_REMOVED,
        CALENDAR_SAVED,
        CALENDAR_REMOVED,
        TOKEN_CREATED,
        TOKEN_REVOKED,
    ),
    **_kind(
        "runs",
        SCHEDULE_FIRED,
        SKIPPED_OVERLAP,
        SKIPPED_MISFIRE,
        JOB_MISSING,
        NEXT_RUN_FAILED,
        SKIPPED_PAUSED,
        SKIPPED_QUOTA,
        SKIPPED_EXCLUDED,
        SCHEDULE_ENDED,
        SCHEDULE_RUN_NOW,
        ITEM_SUCCEEDED,
        ITEM_FAILED,
        ITEM_RETRY,
        ITEM_EXPIRED,
        ITEM_CANCELLED,
        ITEM_TIMED_OUT,
    ),
    **_kind("alerts", ALERT_OPENED, ALERT_RECOVERED, ALERT_SENT, ALERT_UNSENT),
    **_kind("system", LEADER_ACQUIRED, LEADER_RELEASED, TENANT_MOVED_OUT, TENANT_MOVED_IN),
}
