"""Running one claimed item's target, and saying truthfully how it ended.

The worker (worker.py) decides *when* an item starts; this module starts it
and reads the clock at the two instants the record keeps: when the target
was invoked and when it returned (or was stopped). Its failure is data (a
`RunOutcome`), never an exception.

Which pool stops what (docs/controls.md):

- `pool="process"`: a `python:` target runs in a child process
  (targets.processes) that is killed at its timeout or on a cancel request;
  the item ends when the child was killed.
- `pool="thread"` (the default): a Python thread cannot be stopped. A run
  past its timeout, or one asked to stop, goes on to its end; it is then
  recorded timed out (or cancelled) with the time it really ended, and its
  message says "ran to its end at HH:MM:SS".
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cronplane.clock import Clock
from cronplane.core.backoff import RetryPolicy
from cronplane.core.model import Job, QueueItem
from cronplane.errors import RunTimedOut
from cronplane.processes.recorder import RunOutcome
from cronplane.store.database import Database
from cronplane.targets import PermanentFailure, RunContext, Targets
from cronplane.targets.output import RunOutput, capturing
from cronplane.targets.processes import ProcessPool, RunStopped, StopFlag
from cronplane.targets.python import PythonTarget

log = logging.getLogger(__name__)

ERROR_LIMIT = 4000  # characters of error text kept on the item


def default_targets(database: Database, clock: Clock) -> Targets:
    """The kinds the built-in worker runs: `python:`, `webhook:`, `celery:`, `temporal:`,
    `command:` and `container:` (only with CRONPLANE_ALLOW_COMMAND_TARGETS=1; otherwise their
    items fail), internal `system:`."""
    from cronplane.targets.celery import CeleryTarget
    from cronplane.targets.command import CommandTarget
    from cronplane.targets.container import ContainerTarget
    from cronplane.targets.system import SystemTarget
    from cronplane.targets.temporal import TemporalTarget
    from cronplane.targets.webhook import WebhookTarget

    return Targets(
        {
            "python": PythonTarget(),
            "webhook": WebhookTarget.from_environ(clock),
            "celery": CeleryTarget.from_environ(),
            "temporal": TemporalTarget.from_environ(),
            "command": CommandTarget.from_environ(),
            "container": ContainerTarget.from_environ(),
            "system": SystemTarget(database, clock),
        }
    )


def jsonable(value: Any) -> Any:
    """A target's return value as stored: itself when JSON-able, else its repr."""
    if value is None or isinstance(value, str | int | bool):  # most results: no encoding
        return value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return {"repr": repr(value)}
    return value


@dataclass(frozen=True, slots=True)
class Ready:
    """What invoking an item's target needs besides its payload: made when it is started,
    or before its instant for a claim made ahead of it (`ItemRunner.ready`)."""

    policy: RetryPolicy
    context: RunContext | None  # None: its job is missing


@dataclass(frozen=True, slots=True)
class Work:
    """A claimed item with what running it needs (looked up in the claim's transaction)."""

    item: QueueItem
    job: Job | None
    schedule: str | None
    ready: Ready | None = None


class ItemRunner:
    """Runs items' targets, in the calling thread or (python: with a process pool) a child."""

    def __init__(
        self,
        targets: Targets,
        monotonic: Callable[[], float],
        processes: ProcessPool | None,
    ) -> None:
        self.targets = targets
        self.monotonic = monotonic
        self.processes = processes

    @staticmethod
    def ready(work: Work) -> Ready:
        """What `work`'s start needs, made now (for a claim made ahead: before its instant)."""
        item, job = work.item, work.job
        policy = RetryPolicy.from_options(job.options if job else {})
        if job is None:
            return Ready(policy, None)
        context = RunContext(
            tenant=item.tenant,
            stack=item.stack,
            environment=item.environment,
            job=item.job,
            item_id=item.id,
            schedule_id=item.schedule_id,
            schedule=work.schedule,
            scheduled_for=item.scheduled_for,
            attempt=item.attempts,
            source=item.source,
            options=dict(job.options),
            timeout=item.timeout,
        )
        return Ready(policy, context)

    def run(self, work: Work, stop: StopFlag, now: Callable[[], datetime]) -> RunOutcome:
        """Run one item's target; `now` is the worker's clock for the two readings."""
        item, job = work.item, work.job
        ready = work.ready or self.ready(work)
        policy, context = ready.policy, ready.context
        if job is None or context is None:
            return RunOutcome(item, policy, error="job missing: nothing to run")
        invoked: list[tuple[datetime, float]] = []

        def mark() -> None:
            invoked.append((now(), self.monotonic()))

        def ran() -> tuple[datetime, datetime]:
            return (invoked[0][0] if invoked else now()), now()

        # This attempt's output (targets.output): what the target notes, python's logs.
        attempt = RunOutput(logs=job.target.startswith("python:"))
        try:
            runner, spec = self.targets.resolve(job.target)
            if self.processes is not None and isinstance(runner, PythonTarget):
                with capturing(attempt):
                    result = self.processes.run(
                        spec,
                        dict(item.payload),
                        context,
                        timeout=item.timeout,
                        stop=stop,
                        on_start=mark,
                        allowed=runner.allowed,
                    )
            else:
                mark()
                with capturing(attempt):
                    result = runner.run(spec, dict(item.payload), context)
                took = self.monotonic() - invoked[0][1]
                # A thread cannot be stopped: the run went on to its end, judged now.
                if stop.is_set():
                    return self._ran_to_end(item, policy, "cancelled", ran(), attempt)
                if item.timeout is not None and took > item.timeout:
                    return self._ran_to_end(item, policy, "timeout", ran(), attempt)
        except RunStopped as stopped:
            return self._stopped(item, policy, stopped.reason, ran())
        except PermanentFailure as error:  # another attempt cannot help (e.g. HTTP 4xx)
            log.info("item %s (%s) failed permanently: %s", item.id, item.job, error)
            text = str(error)[:ERROR_LIMIT]
            return RunOutcome(item, policy, error=text, ran=ran(), output=attempt.document())
        except Exception as error:  # the job's own failure is data, not a crash
            text = "".join(traceback.format_exception_only(error)).strip()[:ERROR_LIMIT]
            log.info("item %s (%s) failed: %s", item.id, item.job, text)
            return RunOutcome(
                item, policy, error=text, retry=True, ran=ran(), output=attempt.document()
            )
        return RunOutcome(
            item, policy, result=jsonable(result), ran=ran(), output=attempt.document()
        )

    @staticmethod
    def never_started(item: QueueItem, job: Job | None) -> RunOutcome:
        """A claimed item cancelled before its start: recorded cancelled, nothing ran."""
        policy = RetryPolicy.from_options(job.options if job else {})
        log.info("item %s (%s) cancelled before it started", item.id, item.job)
        return RunOutcome(item, policy, error="cancelled", stopped="cancelled")

    def _stopped(
        self,
        item: QueueItem,
        policy: RetryPolicy,
        reason: str,
        ran: tuple[datetime, datetime],
    ) -> RunOutcome:
        """A child killed at its timeout (retried like a failure) or on a cancel request."""
        if reason == "cancelled":
            log.info("item %s (%s) cancelled while running", item.id, item.job)
            return RunOutcome(item, policy, error="cancelled", stopped="cancelled", ran=ran)
        text = str(
            RunTimedOut(f"{item.job} ran past its timeout of {item.timeout:g}s and was stopped")
        )
        log.info("item %s (%s) timed out", item.id, item.job)
        return RunOutcome(item, policy, error=text, retry=True, stopped="timeout", ran=ran)

    @staticmethod
    def _ran_to_end(
        item: QueueItem,
        policy: RetryPolicy,
        reason: str,
        ran: tuple[datetime, datetime],
        attempt: RunOutput,
    ) -> RunOutcome:
        """A thread's run that went past its timeout, or was asked to stop, and could not be
        stopped: recorded as such, with when it really ended."""
        ended = f"ran to its end at {ran[1]:%H:%M:%S} UTC"
        if reason == "cancelled":
            log.info("item %s (%s) cancelled while running; %s", item.id, item.job, ended)
            return RunOutcome(
                item,
                policy,
                error="cancelled",
                stopped="cancelled",
                ran=ran,
                note=f"; {ended}",
                output=attempt.document(),
            )
        text = str(RunTimedOut(f"{item.job} timed out after {item.timeout:g}s; {ended}"))
        log.info("item %s (%s) timed out; %s", item.id, item.job, ended)
        return RunOutcome(
            item,
            policy,
            error=text,
            retry=True,
            stopped="timeout",
            ran=ran,
            output=attempt.document(),
        )
