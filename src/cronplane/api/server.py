"""`cronplane serve`'s HTTP half: uvicorn with the app, beside a node's dispatcher and workers."""

from __future__ import annotations

import logging
import signal
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from starlette.types import ASGIApp

from cronplane.api.app import create_app
from cronplane.processes.collector import tune_collector
from cronplane.processes.node import Node
from cronplane.processes.shard_node import ShardNode
from cronplane.settings import OidcSettings
from cronplane.store.database import Database, read_replica

log = logging.getLogger(__name__)


def serve_api(
    database: Database,
    node: Node | ShardNode,
    *,
    host: str,
    port: int,
    ui: bool = True,
    min_interval: int = 1,
    replica: Database | None = None,
    oidc: OidcSettings | None = None,
) -> None:
    """Start the node's threads, serve the API (and console) until SIGINT/SIGTERM, then stop.

    The app shares the node's clock, and its writes wake the node: a changed
    schedule wakes the dispatcher, a run-now wakes the workers. `min_interval` is
    the CRONPLANE_MIN_INTERVAL setting; `replica` the CRONPLANE_READ_URL one, where the
    API and console read listings and history; `oidc` the CRONPLANE_OIDC_* ones, the
    console's sign-in through an OIDC provider.
    """

    def app_over(shard: Database, **options: Any) -> FastAPI:
        return create_app(
            shard,
            node.clock,
            on_change=node.wake,
            on_enqueue=node.wake_workers,
            min_interval=min_interval,
            **options,
        )

    app = app_over(database, ui=ui, replica=replica, oidc=oidc if ui else None)
    served: ASGIApp = app
    if isinstance(node, ShardNode):
        from cronplane.api.shard_router import ShardRouter

        # Each shard's own app checks API tokens in the control database.
        served = ShardRouter(app, node.databases, lambda shard: app_over(shard, tokens=database))
    # One process, one event loop: the API's sync routes run in its thread pool,
    # the dispatcher and workers in their own threads. uvicorn owns the signals.
    config = uvicorn.Config(served, host=host, port=port, log_level="info", access_log=False)
    server = uvicorn.Server(config)
    # uvicorn re-raises the signal that stopped it once it has shut down, with the
    # handlers found before it ran: the default ones would end the process there, before
    # the node stops (the running items left `running` until their lease lapses). With
    # these, the re-raise returns and the node stops its workers (they finish what runs
    # and give back what they only claimed) and the process exits 0.
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, _stopping)
    node.start()
    tune_collector()
    try:
        server.run()
    finally:
        log.info("stopping the node")
        node.stop()


def _stopping(signum: int, frame: FrameType | None) -> None:
    """Handles SIGINT/SIGTERM after uvicorn has: its shutdown has begun; the node's follows."""
    log.info("signal %d: the node stops after the server", signum)


def app_from_environment() -> FastAPI:
    """An API-only app over CRONPLANE_DATABASE_URL, for `uvicorn --factory` (several workers).

    `uvicorn cronplane.api.server:app_from_environment --factory --workers 4`
    scales an API-only node across processes; dispatch and workers run
    elsewhere (`cronplane dispatcher`, `cronplane worker`).
    """
    from cronplane.processes.node import clock_for
    from cronplane.settings import load_settings, read_url_setting

    settings = load_settings()
    replica = read_replica(read_url_setting())
    database = Database(settings.database_url)
    database.ensure_schema()
    app = create_app(
        database, clock_for(database), min_interval=settings.min_interval, replica=replica
    )
    tune_collector()
    return app
