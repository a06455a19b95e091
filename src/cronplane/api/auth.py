"""Bearer tokens -> Principal, and the access rule every route declares.

Each route takes exactly one of the `Can*` parameters (or `Public`); the
dependency authenticates the bearer token, then runs `core.access.check`
with the route's action and the `{tenant}` of its path. The rule is found
again from the route itself (`route_rule`), so the application refuses to
start when a route has none, and the authorization matrix test enumerates
the routes from the app.

Order of answers: 401 (no or bad token) -> 404 `X404906TENNFD` (another
tenant: the same answer whether it exists or not) -> 403 (role lacks the
permission) -> whatever the route answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final

import fastapi.routing
from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.base import SecurityBase
from starlette.concurrency import run_in_threadpool

from cronplane.api.context import context_of
from cronplane.core.access import Action, Principal, check
from cronplane.errors import Unauthenticated

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="An API token from `cronplane token create` (header `Authorization: Bearer cpt_…`).",
)
RULE_ATTRIBUTE: Final = "cronplane_rule"
PUBLIC: Final = "public"


async def authenticate(
    request: Request, credentials: HTTPAuthorizationCredentials | None
) -> Principal:
    """The principal of the request's bearer token; Unauthenticated otherwise.

    A token the process remembers is answered on the event loop; only a
    database lookup goes to the thread pool (one hop fewer per request).
    """
    if credentials is None or not credentials.credentials:
        raise Unauthenticated("an API token is required: Authorization: Bearer <token>")
    tokens = context_of(request).service.tokens
    principal = tokens.cached(credentials.credentials)
    if principal is None:
        principal = await run_in_threadpool(tokens.authenticate, credentials.credentials)
    return principal


class Authorizer(SecurityBase):
    """A route's access rule as one dependency: read the bearer token, authenticate, `check`.

    It is a security scheme itself (`bearer`'s OpenAPI model and name), so a
    route solves one dependency for its rule instead of two (the rule, and
    `bearer` beneath it); FastAPI's bookkeeping per dependency is a visible
    share of a create's CPU.
    """

    def __init__(self, action: Action, *, tenant_in_body: bool = False) -> None:
        self.model = bearer.model
        self.scheme_name = bearer.scheme_name
        self.action = action
        self.tenant_in_body = tenant_in_body
        setattr(self, RULE_ATTRIBUTE, action)

    async def __call__(self, request: Request) -> Principal:
        principal = await authenticate(request, await bearer(request))
        self.admit(principal, request)
        return principal

    def admit(self, principal: Principal, request: Request) -> None:
        """Raise unless `principal` may do this route's action in the path's tenant."""
        if self.tenant_in_body:
            # The route runs `check` itself once the body names the tenant, so
            # another tenant is still 404 before any role is judged.
            return
        tenant = request.path_params.get("tenant")
        check(principal, tenant if isinstance(tenant, str) else None, self.action)


async def _public() -> None:
    """No credentials needed (health, readiness, metrics)."""


setattr(_public, RULE_ATTRIBUTE, PUBLIC)

CanRead = Annotated[Principal, Depends(Authorizer(Action.READ))]
CanCreate = Annotated[Principal, Depends(Authorizer(Action.CREATE))]
CanUpdate = Annotated[Principal, Depends(Authorizer(Action.UPDATE))]
CanToggle = Annotated[Principal, Depends(Authorizer(Action.TOGGLE))]
CanDelete = Annotated[Principal, Depends(Authorizer(Action.DELETE))]
CanRun = Annotated[Principal, Depends(Authorizer(Action.RUN))]
CanSync = Annotated[Principal, Depends(Authorizer(Action.SYNC))]
CanPromote = Annotated[Principal, Depends(Authorizer(Action.PROMOTE))]
# For the seed's path, whose tenant is in the body: the route must call `check`.
CanSyncBodyTenant = Annotated[Principal, Depends(Authorizer(Action.SYNC, tenant_in_body=True))]
# A valid credential, whatever its tenant or role (tenant-free helpers).
Authenticated = Annotated[Principal, Depends(Authorizer(Action.USE))]
# Platform tokens only (core.access.PLATFORM_ONLY): tenants' usage, and their quotas.
CanSeeTenants = Annotated[Principal, Depends(Authorizer(Action.TENANTS))]
CanSetQuota = Annotated[Principal, Depends(Authorizer(Action.QUOTA))]
Public = Depends(_public)


def route_rule(route: APIRoute) -> Action | str | None:
    """The access rule a route declares (an Action, or PUBLIC); None when it has none.

    Raises ValueError when a route declares two: a route does one thing.
    """
    found: list[Any] = []

    def walk(dependant: Dependant) -> None:
        for sub in dependant.dependencies:
            rule = getattr(sub.call, RULE_ATTRIBUTE, None)
            if rule is not None:
                found.append(rule)
            walk(sub)

    walk(route.dependant)
    if len(found) > 1:
        raise ValueError(f"route {route.path} declares {len(found)} access rules: {found}")
    return found[0] if found else None


@dataclass(frozen=True, slots=True)
class RouteEntry:
    """One operation the app serves: full path template, method, and its APIRoute."""

    path: str
    method: str
    route: APIRoute

    @property
    def rule(self) -> Action | str | None:
        """The route's declared access rule (see `route_rule`)."""
        return route_rule(self.route)


def inventory(app: FastAPI) -> list[RouteEntry]:
    """Every API operation of `app`, with included routers' prefixes applied."""
    entries: list[RouteEntry] = []
    if hasattr(fastapi.routing, "iter_route_contexts"):
        # FastAPI >= 0.16x keeps included routers lazily; this flattens them.
        pairs = [
            (context.path or "", context.methods or set(), context.original_route)
            for context in fastapi.routing.iter_route_contexts(app.routes)
        ]
    else:  # older FastAPI copies included routes onto the app, prefixed
        pairs = [(getattr(r, "path", ""), getattr(r, "methods", set()), r) for r in app.routes]
    for path, methods, route in pairs:
        if isinstance(route, APIRoute):
            entries.extend(RouteEntry(path, method, route) for method in sorted(methods))
    return entries


def check_rules(app: FastAPI) -> None:
    """Refuse to build an app where any API route lacks an access rule."""
    missing = [f"{entry.method} {entry.path}" for entry in inventory(app) if entry.rule is None]
    if missing:
        raise RuntimeError(f"API routes without an access rule: {', '.join(missing)}")
