"""Example job handlers: each is called as `handler(payload, context)` by the worker."""

from __future__ import annotations

import logging
from typing import Any

from cronplane.targets import RunContext

log = logging.getLogger("demo_jobs")


def send_invoices(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """Pretend to submit a batch of invoices; the return value is the item's result."""
    log.info(
        "send_invoices: batch=%s tenant=%s schedule=%s scheduled_for=%s attempt=%d",
        payload.get("batch"),
        context.tenant,
        context.schedule,
        context.scheduled_for,
        context.attempt,
    )
    return {"sent": 0, "batch": payload.get("batch")}


def heartbeat(payload: dict[str, Any], context: RunContext) -> str:
    """Log one line per minute."""
    log.info(
        "heartbeat from %s/%s at %s", context.stack, context.environment, context.scheduled_for
    )
    return "alive"


def build_report(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    """A nightly report (also runnable now: `cronplane schedule run nightly-report --wait`)."""
    log.info("build_report: kind=%s", payload.get("kind"))
    return {"kind": payload.get("kind"), "rows": 0}
