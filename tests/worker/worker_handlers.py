"""Python targets the worker tests run (imported by module name)."""

from __future__ import annotations

from typing import Any

from cronplane.targets import RunContext

CALLS: list[tuple[dict[str, Any], RunContext]] = []


def ok(payload: dict[str, Any], context: RunContext) -> dict[str, Any]:
    CALLS.append((payload, context))
    return {"echo": payload, "attempt": context.attempt}


def boom(payload: dict[str, Any], context: RunContext) -> None:
    CALLS.append((payload, context))
    raise RuntimeError(f"boom on attempt {context.attempt}")


def opaque(payload: dict[str, Any], context: RunContext) -> object:
    return object()


class Jobs:
    @staticmethod
    def nested(payload: dict[str, Any], context: RunContext) -> str:
        return "nested"
