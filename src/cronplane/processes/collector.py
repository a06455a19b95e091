"""The garbage collector of a long-running cronplane process (serve, dispatcher, worker)."""

from __future__ import annotations

import gc


def tune_collector() -> None:
    """Fewer garbage-collector passes in a serving process.

    `gc.freeze()` moves everything loaded at start-up (modules, the app and
    its routes) out of the collector's view, and a larger first-generation
    threshold (default 700 allocations) lets a request's short-lived objects
    die by reference counting before a pass scans them. Cyclic garbage is
    still collected; measured ~8 % less CPU per create (docs/performance.md).
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
