"""The application factory: `create_app(database, clock)`.

Layers, outermost first: HTTP metrics -> coded 500 for bugs -> body limits
-> FastAPI (routing, auth dependency, validation, coded error handlers) ->
one service call per route.

Routes: `/healthz`, `/readyz`, `/metrics` (public); `/api/v1/...` (bearer
token; OpenAPI at `/api/v1/openapi.json`, docs at `/api/docs`); and the
seed's `POST /api/method/shc.schedule.sync`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio.to_thread
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cronplane import __version__
from cronplane.api import (
    alerts,
    audit,
    calendars,
    controls,
    cron,
    environments,
    events,
    health,
    identity,
    job_versions,
    jobs,
    metrics,
    queue,
    schedules,
    selections,
    sync,
    tenants,
    versions,
)
from cronplane.api.auth import check_rules, inventory
from cronplane.api.context import ApiContext, Limits
from cronplane.api.errors import InternalErrors, install
from cronplane.api.grouping import CreateGroups
from cronplane.api.limits import RequestLimits
from cronplane.api.operations import operation_id
from cronplane.api.origin import ChangeOrigin
from cronplane.api.schemas import ErrorBody
from cronplane.clock import Clock, SystemClock
from cronplane.service import ScheduleService
from cronplane.settings import OidcSettings, metrics_token
from cronplane.store.database import Database

API_PREFIX: Final = "/api/v1"
DEFAULT_TOKEN_CACHE_SECONDS: Final = 5.0
# Sync routes run in the thread pool; their work is mostly Python (holding
# the GIL), so more threads only add switching: with anyio's default of 40,
# 32 concurrent list requests cost 38 ms of CPU each, with 4 threads 22 ms
# (2: 18 ms, but fewer database round trips overlap). More throughput comes
# from more processes (docs/operations.md).
API_THREADS: Final = 4


@asynccontextmanager
async def _bounded_threads(app: FastAPI) -> AsyncIterator[None]:
    # The limiter belongs to the event loop, so it is set once the loop runs.
    anyio.to_thread.current_default_thread_limiter().total_tokens = API_THREADS
    yield


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


# Every route may answer these; documented so clients (and schemathesis) know the shape.
ERROR_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    400: _error("Invalid request (X400…): malformed, unknown field, out of range"),
    401: _error("No or invalid API token (X401001AUTHRQ)"),
    403: _error("The token's role lacks the permission (X403001FORBID)"),
    404: _error("Not found, or another tenant (X404…)"),
    409: _error("Conflicts with the current state (X409…)"),
    412: _error("Stale If-Match revision (X412001REVSTL)"),
    413: _error("Request body too large (X413001TOOBIG)"),
    500: _error("A bug (X500001INTERN), logged with its request"),
    503: _error("Database unavailable (X503001DBDOWN)"),
}


def create_app(
    database: Database,
    clock: Clock | None = None,
    *,
    limits: Limits | None = None,
    on_change: Callable[[], None] | None = None,
    on_enqueue: Callable[[], None] | None = None,
    ui: bool = False,
    token_cache_seconds: float = DEFAULT_TOKEN_CACHE_SECONDS,
    min_interval: int = 1,
    replica: Database | None = None,
    oidc: OidcSettings | None = None,
    tokens: Database | None = None,
) -> FastAPI:
    """Build the API over `database`.

    In `cronplane serve`, `on_change` wakes the in-process dispatcher when a
    schedule changes and `on_enqueue` wakes the workers after a run-now;
    `ui=True` also serves the web UI (`cronplane.ui`) at `/`. A valid token is
    remembered `token_cache_seconds` (a revocation made elsewhere takes effect
    within that time; 0 reads the database on every request). `min_interval` is
    the CRONPLANE_MIN_INTERVAL setting: the shortest interval a write may set.
    `replica` (CRONPLANE_READ_URL) serves the listings and history reads. `oidc`
    (CRONPLANE_OIDC_*, with `ui`) adds the console's sign-in through an OIDC provider.
    `tokens`: a shard's app checks API tokens in the control database (api.shard_router).
    """
    clock = clock or SystemClock()
    app = FastAPI(
        title="cronplane",
        version=__version__,
        description="A multi-tenant cron control plane. Errors are `{code, message, detail}`; "
        "codes are listed in docs/codes.md.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        # Our own 500 (InternalErrors) answers; Starlette's debug page never does.
        debug=False,
        lifespan=_bounded_threads,
    )
    service = ScheduleService(
        database,
        clock,
        on_change=on_change,
        on_enqueue=on_enqueue,
        token_cache_seconds=token_cache_seconds,
        min_interval=min_interval,
        # Over HTTP a call is as mighty as its token: a command: job needs a platform admin's.
        local_admin=False,
        replica=replica,
        via="api",
        tokens=tokens,
    )
    app.state.cronplane = ApiContext(
        database=database,
        clock=clock,
        service=service,
        creates=CreateGroups(service),
        limits=limits or Limits(),
        on_change=on_change,
        metrics_token=metrics_token(),
    )
    # Each router straight onto the app (not nested in a /api/v1 router):
    # one level of router matching per request instead of two. Every operation
    # is named in api/operations.py (`schedules_create`, not FastAPI's path-long default).
    routers = (
        schedules, versions, controls, selections, queue, jobs, job_versions, sync, events, cron,
        identity,
    )  # fmt: skip
    for module in (*routers, audit, alerts, tenants, calendars, environments):
        app.include_router(
            module.router,
            prefix=API_PREFIX,
            responses=ERROR_RESPONSES,
            generate_unique_id_function=operation_id,
        )
    app.include_router(
        sync.seed_router, responses=ERROR_RESPONSES, generate_unique_id_function=operation_id
    )
    app.include_router(health.router, generate_unique_id_function=operation_id)
    install(app)
    check_rules(app)
    if ui:
        # The console's pages make their own access checks (same core.access
        # rules) and answer with pages, so they sit outside the API's inventory.
        from cronplane import ui as console

        console.mount(app, oidc)
    # Added last = outermost: metrics see every answer, including refusals.
    app.add_middleware(RequestLimits, limits=app.state.cronplane.limits)
    app.add_middleware(InternalErrors)
    app.add_middleware(ChangeOrigin)
    # The route in the ASGI scope may be the router-relative original: label
    # by the full template, looked up by route identity.
    templates = {id(entry.route): entry.path for entry in inventory(app)}
    app.add_middleware(HttpMetrics, templates=templates)
    return app


class HttpMetrics:
    """ASGI middleware: count and time every request by method, route template and status.

    The route *template* (`/api/v1/tenants/{tenant}/schedules`), never the
    concrete path, labels the series: tenants and names stay out of metrics.
    """

    def __init__(self, app: ASGIApp, templates: Mapping[int, str]) -> None:
        self.app = app
        self.templates = templates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = scope.get("route")
            template = self.templates.get(id(route)) or getattr(route, "path", None)
            metrics.observe_request(
                scope.get("method", "?"),
                template or "<unmatched>",
                status,
                time.perf_counter() - started,
            )
