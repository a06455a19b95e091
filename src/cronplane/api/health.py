"""Liveness, readiness and metrics: outside the versioned prefix, no API token.

`/metrics` asks for the installation's own bearer token when CRONPLANE_METRICS_TOKEN is
set (a scraper's secret, not an API token); 401 X401001AUTHRQ without it.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.exc import SQLAlchemyError

from cronplane.api import metrics
from cronplane.api.auth import Public
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import ErrorBody, Health
from cronplane.errors import Unauthenticated, Unavailable

router = APIRouter(tags=["health"], dependencies=[Public])
Context = Annotated[ApiContext, Depends(current_context)]


@router.get("/healthz", response_model=Health, summary="Liveness: the process answers")
async def healthz() -> Health:
    """Always ok while the process serves requests; no database access."""
    return Health(status="ok", checks={"process": "ok"})


@router.get(
    "/readyz",
    response_model=Health,
    summary="Readiness: database reachable and migrations current",
    responses={503: {"model": ErrorBody, "description": "Not ready (detail.checks says why)"}},
)
def readyz(ctx: Context) -> Health:
    """Ok when the database answers and its schema is at this code's newest migration."""
    checks = {"database": "ok", "migrations": "ok"}
    try:
        ctx.database.ping()
        current = ctx.database.current_revision()
    except SQLAlchemyError as error:
        checks["database"] = f"unreachable: {type(error).__name__}"
        checks["migrations"] = "unknown"
        raise Unavailable("not ready: the database is unreachable", {"checks": checks}) from None
    head = _head_revision(ctx)
    if current != head:
        checks["migrations"] = f"at {current}, code expects {head}: run `cronplane db upgrade`"
        raise Unavailable("not ready: database migrations are not current", {"checks": checks})
    return Health(status="ok", checks=checks)


def _head_revision(ctx: ApiContext) -> str | None:
    # The newest revision is a property of the installed code: read the scripts once.
    head: str | None = getattr(ctx, "_head_revision", None)
    if head is None:
        head = ctx.database.head_revision()
        object.__setattr__(ctx, "_head_revision", head)
    return head


@router.get(
    "/metrics",
    summary="Prometheus metrics (bearer CRONPLANE_METRICS_TOKEN when set)",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
        401: {"model": ErrorBody, "description": "CRONPLANE_METRICS_TOKEN set, not presented"},
    },
)
def prometheus(ctx: Context, request: Request) -> Response:
    """The text exposition: fires, skips, lateness, leader, queue depth, worker, HTTP."""
    if ctx.metrics_token is not None:
        _check_metrics_token(ctx.metrics_token, request.headers.get("authorization", ""))
    body = metrics.exposition(ctx.database, ctx.clock)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


def _check_metrics_token(expected: str, authorization: str) -> None:
    """Unauthenticated unless the header is `Bearer <CRONPLANE_METRICS_TOKEN>`."""
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        raise Unauthenticated(
            "/metrics needs the bearer token set in CRONPLANE_METRICS_TOKEN",
            {"setting": "CRONPLANE_METRICS_TOKEN"},
        )
