"""`temporal:WORKFLOW_TYPE` — start a workflow on the user's Temporal cluster.

cronplane only starts the workflow (through the `temporalio` SDK, the
`temporal` extra: ``pip install 'cronplane[temporal]'``); the user's Temporal
workers run it. The cluster is named by `CRONPLANE_TEMPORAL_ADDRESS`
(`host:port`); without it the item fails at once, as a `celery:` item does
without a broker.

**One start per occurrence.** The workflow id is derived from the occurrence:
``{base}-{scheduled_for}`` (``2027-01-01T09:30:00Z``, the suffix Temporal's own
schedules append), where `base` is the job's `options.workflow_id` or
``cronplane-{tenant}-{stack}-{environment}-{schedule}``; a manual run uses its
item's id instead of the instant. The start asks Temporal to reject any
duplicate id, open or closed, so a retried attempt — after a timeout that hid
a successful start, a worker's crash, a lease taken over — finds the workflow
already started and reports it instead of starting it twice.

Payload → arguments: ``{"args": [...]}`` is the workflow's positional
arguments; any other non-empty payload is its one argument; ``{}`` none.

Job options read here: `task_queue` (required), `namespace` (default
`default`), `workflow_id` (the base above), `execution_timeout`,
`run_timeout`, `task_timeout` (seconds), and `wait` (true: the item runs until
the workflow closes, so cronplane's `overlap` judges the workflow; a workflow
that fails fails the item without retry). The result is
``{"workflow_id", "run_id", "already_started"}`` (and `result` when waiting).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, timedelta
from typing import Any, Final, TypeVar

from cronplane.targets import PermanentFailure, RunContext

ADDRESS_VARIABLE: Final = "CRONPLANE_TEMPORAL_ADDRESS"
DEFAULT_NAMESPACE: Final = "default"
CONNECT_TIMEOUT: Final = 10.0
START_TIMEOUT: Final = 30.0
TIMEOUT_OPTIONS: Final = ("execution_timeout", "run_timeout", "task_timeout")
T = TypeVar("T")


def workflow_id(options: Mapping[str, Any], context: RunContext) -> str:
    """The workflow id of one occurrence (or one manual item): a retry gets the same."""
    base = options.get("workflow_id")
    if not isinstance(base, str) or not base:
        scope = f"{context.tenant}-{context.stack}-{context.environment}"
        base = f"cronplane-{scope}-{context.schedule or context.job}"
    if context.scheduled_for is None:
        return f"{base}-{context.item_id}"
    instant = context.scheduled_for.astimezone(UTC)
    suffix = instant.strftime("%Y-%m-%dT%H:%M:%S")
    if instant.microsecond:
        suffix += f".{instant.microsecond:06d}"
    return f"{base}-{suffix}Z"


def workflow_arguments(payload: Mapping[str, Any]) -> list[Any]:
    """The workflow's positional arguments from a payload; ValueError when misshapen."""
    if not payload:
        return []
    if "args" in payload:
        if set(payload) != {"args"} or not isinstance(payload["args"], list):
            raise ValueError("a payload with `args` holds only `args`, a list")
        return list(payload["args"])
    return [dict(payload)]


class TemporalTarget:
    """Starts `temporal:` workflows through one SDK client per (address, namespace).

    The SDK is asynchronous; the worker is not: one event loop runs in a thread
    of its own and each start is handed to it and waited for.
    """

    def __init__(self, address: str | None) -> None:
        self.address = address
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: dict[str, Any] = {}

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> TemporalTarget:
        """A target for the cluster in CRONPLANE_TEMPORAL_ADDRESS (may be unset)."""
        env = os.environ if environ is None else environ
        return cls(env.get(ADDRESS_VARIABLE) or None)

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Start the workflow `spec` (waiting for it when options.wait); its ids are the result."""
        if self.address is None:
            raise PermanentFailure(
                f"{ADDRESS_VARIABLE} is not set: no Temporal cluster to start on"
            )
        options = context.options
        task_queue = options.get("task_queue")
        namespace = options.get("namespace", DEFAULT_NAMESPACE)
        if not isinstance(task_queue, str) or not task_queue:
            raise PermanentFailure("temporal: jobs need options.task_queue")
        if not isinstance(namespace, str) or not namespace:
            raise PermanentFailure("options.namespace must be a non-empty string")
        try:
            args = workflow_arguments(payload)
            timeouts = {
                name: timedelta(seconds=float(options[name]))
                for name in TIMEOUT_OPTIONS
                if options.get(name)
            }
        except (TypeError, ValueError) as error:
            raise PermanentFailure(str(error)) from error
        wait = options.get("wait") is True
        limit = (context.timeout or 3600.0) + START_TIMEOUT if wait else START_TIMEOUT
        return self._call(
            self._start(
                namespace, spec, args, task_queue, workflow_id(options, context), timeouts, wait
            ),
            limit,
        )

    async def _start(
        self,
        namespace: str,
        workflow: str,
        args: list[Any],
        task_queue: str,
        ident: str,
        timeouts: dict[str, timedelta],
        wait: bool,
    ) -> dict[str, Any]:
        from temporalio.client import WorkflowFailureError
        from temporalio.common import WorkflowIDReusePolicy
        from temporalio.exceptions import WorkflowAlreadyStartedError

        client = await self._client(namespace)
        already = False
        try:
            handle = await client.start_workflow(
                workflow,
                args=args,
                id=ident,
                task_queue=task_queue,
                # Closed runs count too: a retry after the first run finished must not rerun it.
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                **timeouts,
            )
            run_id = handle.result_run_id
        except WorkflowAlreadyStartedError as error:
            already = True
            handle = client.get_workflow_handle(ident)
            run_id = error.run_id
        result: dict[str, Any] = {
            "workflow_id": ident,
            "run_id": run_id,
            "already_started": already,
        }
        if wait:
            try:
                result["result"] = await handle.result()
            except WorkflowFailureError as error:
                raise PermanentFailure(
                    f"workflow {ident} failed: {error.cause or error}"
                ) from error
        return result

    async def _client(self, namespace: str) -> Any:
        client = self._clients.get(namespace)
        if client is None:
            try:
                from temporalio.client import Client
            except ImportError as error:
                raise PermanentFailure(
                    "temporal targets need the temporal extra: pip install 'cronplane[temporal]'"
                ) from error
            assert self.address is not None
            client = await asyncio.wait_for(
                Client.connect(self.address, namespace=namespace), CONNECT_TIMEOUT
            )
            self._clients[namespace] = client
        return client

    def _call(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `coroutine` on the target's loop and wait for it (at most `timeout` s)."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="temporal-target", daemon=True
                ).start()
                self._loop = loop
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except FutureTimeout as error:
            future.cancel()
            raise TimeoutError(f"Temporal did not answer within {timeout:g} s") from error

    def close(self) -> None:
        """Stop the loop (its clients' connections go with it)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop, self._thread = None, None
            self._clients.clear()
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            if not thread.is_alive():
                loop.close()
