"""What a dispatcher reports of its ticks (metrics, tests), and its defaults for who it is
and how a shared round splits."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from cronplane.core.firing import Outcome
from cronplane.store.dispatch import Fairness


def equal_shares(now: datetime) -> Fairness:
    """Every tenant the same share of a batch (no weights, no caps)."""
    return Fairness()


def default_holder() -> str:
    """A holder name unique to this process instance: host, pid and a nonce."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class BatchReport:
    """One committed fire transaction."""

    selected: int
    fired: int
    fired_for: tuple[datetime, ...]
    committed_at: datetime
    coalesced: int = 0  # missed occurrences folded into these fires
    # (tenant, outcome) → rows, computed when asked (the per-tenant metrics).
    by_tenant: Callable[[], dict[tuple[str, Outcome], int]] = dict
    # The instant it was decided as of: its items are claimable from then.
    decided_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TickReport:
    """What one tick did and how long to sleep before the next."""

    leader: bool
    term: int | None
    sleep: float
    counts: dict[Outcome, int] = field(default_factory=dict)
    batches: tuple[BatchReport, ...] = ()
    fenced: bool = False
    error: str | None = None
    # Rows filed by schedule in this tick (SQLite, store.filing).
    filed: int = 0

    @property
    def fired(self) -> int:
        """Queue items enqueued in this tick."""
        return self.counts.get(Outcome.FIRE, 0)
