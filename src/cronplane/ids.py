"""Time-ordered row ids (UUID version 7 layout).

Rows made together get neighbouring keys, so a batch appends to a
primary-key index instead of dirtying a random page per row: for the API's
grouped creates that was 15 % of the CPU and 30 % of the wall time of each
transaction on SQLite. The standard library has uuid7 only from Python 3.14.
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
