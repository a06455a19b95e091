"""Time-ordered row ids (UUID version 7 layout).

Rows made together get neighbouring keys, so a batch (a group of API
creates, a fire batch of queue items) appends to a primary-key index instead
of dirtying a random page per row: for the API's grouped creates that was
15 % of the CPU and 30 % of the wall time of each transaction on SQLite. The standard library has uuid7 only from Python 3.14.
"""

from __future__ import annotations

import os
from datetime import datetime
from uuid import UUID


def time_ordered_id(now: datetime) -> UUID:
    """48-bit Unix milliseconds of `now`, then 74 random bits (version 7, RFC 4122 variant)."""
    value = (int(now.timestamp() * 1000) & (2**48 - 1)) << 80
    value |= int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return UUID(int=value)


_RAND_B = (1 << 62) - 1


def time_ordered_hexes(now: datetime, count: int) -> list[str]:
    """`count` ids of the `time_ordered_id` layout as 32 hex digits: one fire batch's worth.

    One random draw serves the batch (per-id UUID objects were a visible
    share of the fire path); each id keeps 62 random bits of its own and the
    list is sorted, so a batch appends to the primary key in order. Hex text
    is what SQLite stores and what PostgreSQL's COPY accepts for a uuid.
    """
    millis = int(now.timestamp() * 1000) & (2**48 - 1)
    rand_a = int.from_bytes(os.urandom(2), "big") & 0xFFF
    high = (millis << 80) | (0x7 << 76) | (rand_a << 64) | (0x2 << 62)  # version 7, variant
    draws = memoryview(os.urandom(8 * count)).cast("Q")
    return [f"{high | low:032x}" for low in sorted(draw & _RAND_B for draw in draws)]
