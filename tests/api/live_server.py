"""A real uvicorn serving the app on 127.0.0.1 with an ephemeral port, in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from cronplane.api.app import create_app
from cronplane.clock import Clock, SystemClock
from cronplane.store.database import Database


@contextmanager
def serving(database: Database, clock: Clock | None = None) -> Iterator[str]:
    """Serve the API over `database`; yield its base URL; stop it on exit."""
    app = create_app(database, clock or SystemClock())
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    ready = threading.Event()
    for _ in range(500):
        if server.started:
            ready.set()
            break
        threading.Event().wait(0.01)
    assert ready.is_set(), "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
