"""The `python:` target of patroni_failover.py: one line per run in the payload's file.

A line is `schedule<TAB>scheduled_for<TAB>pid<TAB>item id<TAB>attempt<TAB>ran at` (epoch
seconds, this machine's clock: the checks' firing gap is measured on it), written
with one O_APPEND write (atomic for a line this short), so the two serve nodes'
workers can share the file.
"""

from __future__ import annotations

import os
import time
from typing import Any

from cronplane.targets import RunContext


def record(payload: dict[str, Any], context: RunContext) -> None:
    """Append this run's line to `payload["file"]`."""
    when = context.scheduled_for.isoformat() if context.scheduled_for else "-"
    line = f"{context.schedule}\t{when}\t{os.getpid()}\t{context.item_id}\t{context.attempt}\t{time.time():.3f}\n"
    descriptor = os.open(payload["file"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)
