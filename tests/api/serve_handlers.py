"""A job handler for the `cronplane serve` test (imported by the server's worker)."""

from __future__ import annotations

from typing import Any


def tick(payload: dict[str, Any], context: Any) -> dict[str, Any]:
    """Succeed, echoing the payload."""
    return {"echo": payload}
