"""What a worker holds between a claim and a run slot: claimed items waiting for a slot,
items read ahead of the instant they become claimable, and those of them claimed ahead
of it (processes.worker)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime

from cronplane.processes.item_runner import Work


@dataclass(slots=True)
class Claimed:
    """A claimed item waiting for a slot: when it was claimed and when it became startable
    (monotonic; its claim, or the instant a claim made ahead of it was for)."""

    work: Work
    claimed: float
    startable: float
    # Claimed ahead beyond one item a slot while the pace was unknown: given back as soon
    # as the slots are all held by slow items (RunSlots, GUESS_WAIT), not START_BOUND.
    guess: bool = False


@dataclass(slots=True)
class ReadAhead:
    """Items read ahead of the instant they become claimable, with their lookups."""

    at: datetime
    works: deque[Work]
    part: int = 32  # the next claim's size (doubling)


@dataclass(slots=True)
class ClaimedAhead:
    """Items claimed ahead of the instant they become claimable, started from it."""

    due: float  # the monotonic reading of their instant
    works: list[Work]
    claimed: float  # monotonic: when the claim was made
    sure: int  # the first `sure` works are what the pace rule claims; the rest a guess
