"""The API over several shards: each request goes to the app of its tenant's shard.

Every tenant route is under `/api/v1/tenants/{tenant}/…`; the router reads
the tenant from the path, asks the control database's map where it lives
(one indexed read: a move is seen by the next request) and hands the
request to that shard's app, built once, over that shard's database, with
API tokens checked in the control database. Everything else (the tenant
listing, whoami, cron explain, health, metrics, the console) is the
control database's app. A write while the tenant moves between shards is
answered 409 X409420SHDMOV: it would land on the side it is leaving.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from cronplane.api.errors import error_response
from cronplane.core.shards import DEFAULT_SHARD
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.shard_databases import ShardDatabases

_TENANT_PATH = re.compile(r"^/api/v1/tenants/(?P<tenant>[^/]+)(/|$)")
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class ShardRouter:
    """An ASGI app: the control database's app, and one per shard for tenant paths."""

    def __init__(
        self,
        control_app: FastAPI,
        databases: ShardDatabases,
        build: Callable[[Database], FastAPI],
    ) -> None:
        self.control_app = control_app
        self.databases = databases
        self.build = build
        self._apps: dict[str, FastAPI] = {DEFAULT_SHARD: control_app}
        self._lock = threading.Lock()
        # The platform's tenant listing spans every shard (api.tenants).
        control_app.state.cronplane.shard_services = self.services
        control_app.state.cronplane.tenant_service = self.service_of

    def services(self) -> list[ScheduleService]:
        """Every shard's service, the control's first."""
        names = [shard.name for shard in self.databases.shards()]
        return [self._app_of(name).state.cronplane.service for name in names]

    def service_of(self, tenant: str) -> ScheduleService:
        """The service of the shard `tenant` lives on (TenantMoving while it moves)."""
        place = self.databases.place(tenant)
        refusal = place.write_refusal()
        if refusal is not None:
            raise refusal
        service: ScheduleService = self._app_of(place.shard).state.cronplane.service
        return service

    def _app_of(self, shard: str) -> FastAPI:
        with self._lock:
            app = self._apps.get(shard)
            if app is None:
                app = self._apps[shard] = self.build(self.databases.database(shard))
            return app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.control_app(scope, receive, send)  # lifespan: the control app's
            return
        match = _TENANT_PATH.match(scope["path"])
        if match is None:
            await self.control_app(scope, receive, send)
            return
        place = await run_in_threadpool(self.databases.place, match["tenant"])
        refusal = place.write_refusal()
        if refusal is not None and scope["method"] not in _READS:
            await error_response(refusal, {"Retry-After": "1"})(scope, receive, send)
            return
        app = self._app_of(place.shard)
        await app(scope, receive, send)
