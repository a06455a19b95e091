"""What a worker holds between a claim and a run slot: claimed items waiting for a slot,
and items read ahead of the instant they become claimable (processes.worker)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime

from cronplane.processes.item_runner import Work


@dataclass(slots=True)
class Claimed:
    """A claimed item waiting for a slot: when it was claimed (monotonic)."""

    work: Work
    claimed: float


@dataclass(slots=True)
class ReadAhead:
    """Items read ahead of the instant they become claimable, with their lookups."""

    at: datetime
    works: deque[Work]
    part: int = 32  # the next claim's size (doubling)
