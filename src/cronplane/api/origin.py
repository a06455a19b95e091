"""How the changes a request makes came (core.versions): the stamp on their versions.

A pure ASGI middleware around every request: the console's pages change
`via: console`, the API's routes `via: api` (`cli` when the remote CLI says
so in `X-Cronplane-Via`), with the `X-Cronplane-Reason` header (UTF-8,
percent-encoded) as the reason.
It sets `service.base.changes_via` for the request; FastAPI runs a sync route
in a worker thread with a copy of this context, so the route's transaction
reads it.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote

from starlette.types import ASGIApp, Receive, Scope, Send

from cronplane.core.versions import Via
from cronplane.service.base import changes_via

API_PATHS: Final = ("/api/", "/healthz", "/readyz", "/metrics")
MAX_REASON: Final = 500


class ChangeOrigin:
    """Stamps each request's definition changes with how they came and why."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        via: Via = "api" if str(scope.get("path", "")).startswith(API_PATHS) else "console"
        if via == "api" and headers.get(b"x-cronplane-via", b"").lower() == b"cli":
            via = "cli"
        raw = headers.get(b"x-cronplane-reason")
        reason = unquote(raw.decode("latin-1"))[:MAX_REASON] if raw else None
        with changes_via(via, reason):
            await self.app(scope, receive, send)
