"""Helpers for the API tests: an app over a database, tokens per role, seeded rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from cronplane.api.app import create_app
from cronplane.clock import FakeClock
from cronplane.core.access import Role
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database

START = datetime(2026, 1, 5, 12, 0, 30, tzinfo=UTC)
V1 = "/api/v1"


def bearer(secret: str) -> dict[str, str]:
    """The Authorization header for a token."""
    return {"Authorization": f"Bearer {secret}"}


@dataclass
class Api:
    """An app over one database, a client, and a token per (tenant, role)."""

    database: Database
    clock: FakeClock
    app: FastAPI
    client: TestClient
    service: ScheduleService
    tokens: TokenService
    _secrets: dict[tuple[str | None, Role], str] = field(default_factory=dict)

    def token(self, tenant: str | None, role: Role | str = Role.ADMIN) -> str:
        """A token of `role` in `tenant` (None: platform), made once and reused."""
        role = role if isinstance(role, Role) else Role(role)
        key = (tenant, role)
        if key not in self._secrets:
            created = self.tokens.create(tenant=tenant, role=role, actor="test")
            self._secrets[key] = created.secret
        return self._secrets[key]

    def headers(self, tenant: str | None, role: Role | str = Role.ADMIN) -> dict[str, str]:
        """Authorization header for `token(tenant, role)`."""
        return bearer(self.token(tenant, role))

    def call(
        self,
        method: str,
        path: str,
        *,
        tenant: str | None = "acme",
        role: Role | str = Role.ADMIN,
        **kwargs: Any,
    ) -> Any:
        """A request as (tenant, role); `path` is relative to /api/v1 unless absolute."""
        url = path if path.startswith(("/api/", "/healthz", "/readyz", "/metrics")) else V1 + path
        headers = {**self.headers(tenant, role), **kwargs.pop("headers", {})}
        return self.client.request(method, url, headers=headers, **kwargs)


def make_api(database: Database) -> Api:
    """An app over `database` with a fake clock at START."""
    clock = FakeClock(START)
    app = create_app(database, clock)
    return Api(
        database=database,
        clock=clock,
        app=app,
        client=TestClient(app),
        service=app.state.cronplane.service,
        tokens=app.state.cronplane.service.tokens,
    )


def seed_tenant(service: ScheduleService, tenant: str, *, prefix: str | None = None) -> None:
    """A job `report` and schedules `<prefix>-nightly` (user) in tenant/billing/prod."""
    prefix = prefix or tenant
    service.register_job(
        tenant,
        "billing",
        JobSpec(name="report", target="python:billing.jobs:report", payload={"kind": "daily"}),
        actor="seed",
    )
    service.create_schedule(
        Scope(tenant, "billing", "prod"),
        ScheduleSpec(job="report", cron="30 2 * * *", name=f"{prefix}-nightly"),
        actor="seed",
    )
