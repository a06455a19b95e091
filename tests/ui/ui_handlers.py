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


def noisy(payload: dict[str, Any], context: RunContext) -> None:
    """Logs a known line (a long one, a URL with a credential in it), then fails for good."""
    import logging

    from cronplane.targets import PermanentFailure

    log = logging.getLogger("ui_handlers.noisy")
    log.warning(
        "zz-noisy %s fetched https://feeds.example.com/export?token=zz-secret-42 and found "
        "the upstream ledger closed for the night, so nothing was exported this time",
        context.item_id,
    )
    raise PermanentFailure("zz cause: the upstream ledger is closed")
