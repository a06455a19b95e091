"""Who runs a job: one `Target` protocol, one module per kind (SPEC §7).

A job's target string is `<kind>:<spec>`, e.g. `python:billing.jobs:send_invoices`.
The built-in worker looks the kind up in a :class:`Targets` registry and calls
``target.run(spec, payload, context)``; what it returns (JSON-able) is the
item's result, what it raises is the item's error. An ordinary exception is
retried with backoff while the item has attempts left; :class:`PermanentFailure`
says retrying cannot help (a webhook's 4xx), so the item fails at once. A
kind this worker has no runner for (:class:`UnknownTargetKind`) is one: the
item fails on its first attempt, its error the coded `X400008TGTINV` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from cronplane.errors import InvalidTarget


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a job learns about the run besides its payload."""

    tenant: str
    stack: str
    environment: str
    job: str
    item_id: UUID
    schedule_id: UUID | None
    schedule: str | None  # the schedule's name, when the item came from one
    scheduled_for: datetime | None
    attempt: int  # 1-based
    source: str  # schedule | manual | api
    # The job's options (timeouts, routing, secrets' rotation): targets read their own keys.
    options: Mapping[str, Any] = field(default_factory=dict)
    # The item's effective timeout in seconds (the schedule's, else the job's); None: none.
    timeout: float | None = None


class Target(Protocol):
    """Runs one kind of target."""

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Run the job; return its result or raise its failure."""
        ...


class PermanentFailure(Exception):
    """A failure that another attempt cannot fix: the worker fails the item without retry."""


class UnknownTargetKind(PermanentFailure, InvalidTarget, LookupError):
    """No runner for this kind in this worker (e.g. `celery:` without a bridge): fails at once.

    Retrying on the same worker cannot help, and silently retrying would hide
    a misconfigured worker for max_attempts backoffs.
    """


def split_target(target: str) -> tuple[str, str]:
    """`kind:spec` → (kind, spec); ValueError when there is no kind."""
    kind, sep, spec = target.partition(":")
    if not sep or not kind or not spec:
        raise ValueError(f"target {target!r} is not '<kind>:<spec>'")
    return kind, spec


class Targets:
    """The kinds this worker can run, by name."""

    def __init__(self, runners: Mapping[str, Target]) -> None:
        self._runners = dict(runners)

    def kinds(self) -> list[str]:
        """The kinds this registry runs."""
        return sorted(self._runners)

    def resolve(self, target: str) -> tuple[Target, str]:
        """The runner and spec for a target string."""
        kind, spec = split_target(target)
        runner = self._runners.get(kind)
        if runner is None:
            raise UnknownTargetKind(
                f"no runner for {kind!r} targets in this worker (has: {', '.join(self.kinds())})",
                {"kind": kind, "kinds": self.kinds()},
            )
        return runner, spec
