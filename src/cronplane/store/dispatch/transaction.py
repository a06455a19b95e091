"""What a fire transaction is on either database: its fence, its report, its rows.

Shared by the SQLite and PostgreSQL fire paths (and the dispatcher, which
passes the fencing and reads the result).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from cronplane.core.firing import Outcome

ACTOR = "dispatcher"

# The columns a fire writes; the others keep their NULL defaults.
ITEM_COLUMNS = (
    "id", "tenant", "stack", "environment", "job", "payload", "source", "schedule_id",
    "scheduled_for", "priority", "status", "available_at", "expires_at", "attempts",
    "max_attempts", "created_at", "updated_at", "timeout", "max_concurrency", "exclusive",
)  # fmt: skip
# Overlap rules whose items wait while another item of their schedule runs.
EXCLUSIVE_OVERLAPS = ("buffer_one", "cancel_running")
EVENT_COLUMNS = (
    "code", "tenant", "stack", "environment", "schedule_id", "schedule_name", "item_id",
    "actor", "message", "scheduled_for", "fired_at", "created_at", "detail",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Fencing:
    """Who we are as leader: checked at the start of every fire transaction."""

    lease_name: str
    holder: str
    term: int


@dataclass(frozen=True, slots=True)
class EndedPause:
    """A pause the batch ended by itself (its until reached) whose policy enqueues what it
    passed (`missed`: once or all), as of the occurrence that ended it: what the same
    transaction still owes (service.backfills.enqueue_passed). The batch has cleared
    the row's pause fields by then, so they travel here."""

    schedule_id: UUID | None  # None on the plan, which stands for all its rows
    paused_at: datetime
    paused_until: datetime | None
    paused_by: str | None
    paused_note: str | None
    missed: str
    as_of: datetime


@dataclass(slots=True)
class BatchResult:
    """What one fire transaction did (counts per outcome, fired occurrences)."""

    selected: int = 0
    counts: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))
    fired_for: list[datetime] = field(default_factory=list)
    # Missed occurrences folded into this batch's fires (a decision's coalesced - 1).
    coalesced: int = 0
    # (tenant, outcome) → rows, for the per-tenant metrics: computed when asked
    # (PostgreSQL counts its ledger rows then), so a batch pays nothing without them.
    by_tenant: Callable[[], dict[tuple[str, Outcome], int]] = dict
    # One per row whose pause ended with a policy that enqueues: rare, usually empty.
    ended_pauses: list[EndedPause] = field(default_factory=list)
