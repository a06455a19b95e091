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
