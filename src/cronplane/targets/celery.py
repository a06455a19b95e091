"""`celery:TASK_NAME` — publish the task to the user's Celery broker; their workers run it.

cronplane only publishes (``app.send_task``): it needs neither the task's code
nor a result backend, so one bridge serves every Celery project on the broker
named by `CRONPLANE_CELERY_BROKER_URL` (`amqp://…`, `redis://…`). Install the
`celery` extra (``pip install 'cronplane[celery]'``).

Payload → arguments: a payload with an `args` (list) or `kwargs` (object) key
is taken as ``{"args": [...], "kwargs": {...}}`` and may hold no other key (so
nothing is silently dropped); any other payload is the task's keyword
arguments as a whole. ``{"batch": 100}`` calls ``task(batch=100)``.

Job options read here: `queue`, `routing_key`, `exchange`, `priority`
(0-255), `expires` (seconds after publishing), `headers` (an object of message
headers, beside cronplane's own); the item's timeout (the schedule's
`timeout`, else the job's) is published as the task's Celery `time_limit`.
The Celery task id is the
queue item's id, so a delivery can be traced both ways and a publish retried
after an uncertain failure keeps its id (a consumer can de-duplicate on it).
The run's context travels in the message header `cronplane` (a bound task
reads ``self.request.cronplane``).

A published task is "delivered": the item succeeds with result
``{"celery_task_id": …}``; whether the task then succeeds is Celery's to
record. A broker that cannot be reached fails the attempt, and the worker
retries it with backoff.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any, Final

from cronplane.targets import PermanentFailure, RunContext
from cronplane.targets.webhook import context_document

BROKER_VARIABLE: Final = "CRONPLANE_CELERY_BROKER_URL"
ROUTING_OPTIONS: Final = ("queue", "routing_key", "exchange")
CONNECT_TIMEOUT: Final = 5.0
# A short in-call retry rides over a broker blip; longer outages go to the worker's backoff.
PUBLISH_RETRY_POLICY: Final = {
    "max_retries": 1,
    "interval_start": 0.2,
    "interval_step": 0.5,
    "interval_max": 1.0,
}


def task_arguments(payload: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """(args, kwargs) for `send_task` from a payload; ValueError when its shape is wrong."""
    if "args" not in payload and "kwargs" not in payload:
        return [], dict(payload)
    extra = sorted(set(payload) - {"args", "kwargs"})
    if extra:
        raise ValueError(
            f"a payload with args/kwargs may hold nothing else (found {', '.join(extra)}); "
            "put those keys inside kwargs"
        )
    args = payload.get("args", [])
    kwargs = payload.get("kwargs", {})
    if not isinstance(args, list):
        raise ValueError("payload.args must be a list")
    if not isinstance(kwargs, dict):
        raise ValueError("payload.kwargs must be an object")
    return list(args), dict(kwargs)


def publish_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`send_task` keyword arguments from a job's options; ValueError when one is invalid."""
    chosen: dict[str, Any] = {}
    for name in ROUTING_OPTIONS:
        value = options.get(name)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise ValueError(f"options.{name} must be a non-empty string")
            chosen[name] = value
    priority = options.get("priority")
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 255:
            raise ValueError("options.priority must be a whole number in 0..255")
        chosen["priority"] = priority
    expires = options.get("expires")
    if expires is not None:
        if isinstance(expires, bool) or not isinstance(expires, int | float) or expires <= 0:
            raise ValueError("options.expires must be seconds > 0")
        chosen["expires"] = float(expires)
    headers = options.get("headers")
    if headers is not None:
        if not isinstance(headers, dict) or "cronplane" in headers:
            raise ValueError("options.headers must be an object without the key 'cronplane'")
        chosen["headers"] = dict(headers)
    return chosen


class CeleryTarget:
    """Publishes `celery:` targets through one Celery app per worker process."""

    def __init__(self, broker_url: str | None, *, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.broker_url = broker_url
        self.connect_timeout = connect_timeout
        self._app: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> CeleryTarget:
        """A target for the broker in CRONPLANE_CELERY_BROKER_URL (may be unset)."""
        env = os.environ if environ is None else environ
        return cls(env.get(BROKER_VARIABLE) or None)

    def app(self) -> Any:
        """The publishing Celery app, made on first use (celery is an optional extra)."""
        with self._lock:
            if self._app is None:
                if self.broker_url is None:
                    raise PermanentFailure(f"{BROKER_VARIABLE} is not set: no broker to publish to")
                try:
                    from celery import Celery
                except ImportError as error:
                    raise PermanentFailure(
                        "celery targets need the celery extra: pip install 'cronplane[celery]'"
                    ) from error
                # set_as_current=False: the bridge must not become the process's
                # default app, which a python: target may define for itself.
                app = Celery("cronplane-bridge", broker=self.broker_url, set_as_current=False)
                app.conf.update(
                    broker_connection_timeout=self.connect_timeout,
                    broker_connection_retry=False,
                    broker_transport_options={
                        "socket_connect_timeout": self.connect_timeout,
                        "socket_timeout": self.connect_timeout,
                    },
                    task_serializer="json",
                    accept_content=["json"],
                )
                self._app = app
            return self._app

    def close(self) -> None:
        """Release the broker connections."""
        with self._lock:
            if self._app is not None:
                # Celery's own close() only forgets its pools; their sockets stay open.
                self._app.amqp.producer_pool.force_close_all()
                self._app.pool.force_close_all()
                self._app.close()
                self._app = None

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Publish the task; the result names the Celery task id."""
        try:
            args, kwargs = task_arguments(payload)
            options = publish_options(context.options)
            if context.timeout is not None:  # Celery's hard limit: its worker kills the task
                options["time_limit"] = context.timeout
        except ValueError as error:
            raise PermanentFailure(f"celery job {context.job!r}: {error}") from error
        task_id = str(context.item_id)
        # Errors from the broker (kombu's OperationalError, socket errors) propagate:
        # the worker retries them with backoff.
        self.app().send_task(
            spec,
            args=args,
            kwargs=kwargs,
            task_id=task_id,
            headers={**options.pop("headers", {}), "cronplane": context_document(context)},
            retry=True,
            retry_policy=PUBLISH_RETRY_POLICY,
            **options,
        )
        return {"celery_task_id": task_id, "task": spec, "queue": options.get("queue")}
