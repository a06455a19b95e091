"""Python targets the UI tests' worker runs (imported by module name)."""

from __future__ import annotations

from typing import Any

from cronplane.targets import RunContext


def report(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """Succeeds, echoing what it was given."""
    return {"built": payload.get("kind", "daily"), "schedule": context.schedule}


def invoices(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """Succeeds with a count."""
    return {"sent": int(payload.get("batch", 0))}


def broken(payload: dict[str, Any], context: RunContext) -> None:
    """Always fails: the UI shows the job's own error."""
    raise RuntimeError("upstream ledger is locked")


def lingering(payload: dict[str, Any], context: RunContext) -> str:
    """Runs for `seconds` (default 3): long enough to be seen running and cancelled."""
    import threading

    threading.Event().wait(float(payload.get("seconds", 3)))
    return "lingered"
