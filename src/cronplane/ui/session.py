"""The browser session: who is signed in, for which tenant, and the CSRF token.

A session is the API token itself, kept in an HttpOnly, SameSite=Strict
cookie (Secure when served over HTTPS): scripts cannot read it and other
sites cannot send it. Every request re-authenticates it through
`TokenService.authenticate`, so revoking the token ends the session at once.
Or, for a user who signed in through the OIDC provider, a sealed cookie with
their identity and grants (`cronplane.ui.oidc_session`), which yields the same
`Principal` (`via` "oidc") in the tenant viewed (core.grants.principal_for).

CSRF: every form and every htmx request that changes something carries a
synchronizer token derived from the session cookie (HMAC-SHA256), checked on
every non-GET request. It is bound to the session, needs no server state, and
does not reveal the secret. The sign-in form, which has no session yet, uses a
double-submit cookie instead.

Each page route declares the action it needs (`Reader`, `Creator`, ...): the
dependency authenticates, runs the same `core.access.check` as the API, and
carries the route's rule (`cronplane.api.auth.RULE_ATTRIBUTE`) so the app's
"every route has a rule" check covers the UI too.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Annotated, Final

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from cronplane.api.auth import RULE_ATTRIBUTE
from cronplane.api.context import context_of
from cronplane.core.access import PLATFORM_ONLY, Action, Principal, check, permits
from cronplane.core.grants import default_tenant, principal_for, tenants_of
from cronplane.errors import CronplaneError, Forbidden, Unauthenticated
from cronplane.ui.oidc_session import OIDC_COOKIE, sign_in_of

SESSION_COOKIE: Final = "cronplane_session"
TENANT_COOKIE: Final = "cronplane_tenant"
LOGIN_CSRF_COOKIE: Final = "cronplane_signin_csrf"
CSRF_FIELD: Final = "csrf"
CSRF_HEADER: Final = "X-CSRF-Token"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
_CSRF_KEY: Final = b"cronplane-ui-csrf-v1"


class SignInRequired(Exception):
    """No valid session: the browser is sent to the sign-in page."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class TenantRequired(Exception):
    """A platform session that has not chosen a tenant yet: sent to the Tenants page."""


class PageRefused(Exception):
    """A coded refusal (forbidden, another tenant, bad CSRF) shown as an error page."""

    def __init__(self, error: CronplaneError) -> None:
        super().__init__(str(error))
        self.error = error


class CsrfRejected(Forbidden):
    """A form's CSRF token is missing or wrong (403, the Forbidden code)."""


def csrf_token(secret: str) -> str:
    """The CSRF token bound to a session secret (one-way: it never reveals the secret)."""
    return hmac.new(_CSRF_KEY, secret.encode(), hashlib.sha256).hexdigest()


def new_signin_csrf() -> str:
    """A random double-submit token for the sign-in form."""
    return secrets.token_urlsafe(24)


def same(a: str | None, b: str | None) -> bool:
    """Constant-time equality of two tokens; False when either is missing."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


@dataclass(frozen=True, slots=True)
class Permissions:
    """The role's answer per action, as plain booleans.

    A dict here would be a trap: in Jinja `can.update` finds `dict.update`
    (always truthy) before the key. One field per `Action` (a test checks both agree).
    """

    read: bool = False
    create: bool = False
    update: bool = False
    toggle: bool = False
    delete: bool = False
    run: bool = False
    sync: bool = False
    use: bool = False
    promote: bool = False  # an environment's schedules onto another (CREATE + UPDATE)
    tenants: bool = False  # platform tokens only
    quota: bool = False  # platform admins only


@dataclass(frozen=True, slots=True)
class Session:
    """The signed-in caller: principal, tenant in view and the CSRF token of its forms."""

    principal: Principal
    tenant: str
    csrf: str
    tenants: tuple[str, ...] = ()  # an OIDC user's tenants, for the header's switcher
    display: str = ""  # an OIDC user's name claim, for the header

    def can(self, action: Action) -> bool:
        """True when the role grants `action` (decides which buttons appear); a platform-only
        action needs a platform token too."""
        if action in PLATFORM_ONLY and not self.principal.is_platform:
            return False
        return permits(self.principal.role, action)

    @property
    def permissions(self) -> Permissions:
        """What templates ask as `can.update`, `can.run`, ... (each a real attribute)."""
        return Permissions(**{action.value: self.can(action) for action in Action})

    @property
    def role(self) -> str:
        """The role's name, for the header."""
        return self.principal.role.value


def set_session(response: Response, request: Request, secret: str, tenant: str | None) -> None:
    """Store the session cookies on `response` (the token HttpOnly and SameSite=Strict)."""
    secure = request.url.scheme == "https"
    response.set_cookie(
        SESSION_COOKIE, secret, httponly=True, samesite="strict", secure=secure, path="/"
    )
    if tenant is not None:
        response.set_cookie(
            TENANT_COOKIE, tenant, httponly=True, samesite="strict", secure=secure, path="/"
        )
    else:
        response.delete_cookie(TENANT_COOKIE, path="/")
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/")
    response.delete_cookie(OIDC_COOKIE, path="/")


def set_tenant(response: Response, request: Request, tenant: str) -> None:
    """Switch a platform session to `tenant` (its token stays the same)."""
    secure = request.url.scheme == "https"
    response.set_cookie(
        TENANT_COOKIE, tenant, httponly=True, samesite="strict", secure=secure, path="/"
    )


def clear_session(response: Response) -> None:
    """Remove the session cookies."""
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(TENANT_COOKIE, path="/")
    response.delete_cookie(OIDC_COOKIE, path="/")


def _oidc_session(request: Request, sealed: str) -> Session:
    """The OIDC user's Principal in the tenant viewed (the tenant cookie when a grant covers
    it, else their first tenant); SignInRequired when the cookie does not open or expired."""
    sign_in = sign_in_of(request)
    now = context_of(request).clock.now()
    identity = sign_in.identity(sealed, now) if sign_in is not None else None
    if identity is None:
        raise SignInRequired("Your session ended: sign in again.")
    chosen = request.cookies.get(TENANT_COOKIE) or ""
    principal = principal_for(identity.grants, chosen, identity.name) if chosen else None
    if principal is None:
        chosen = default_tenant(identity.grants)
        principal = principal_for(identity.grants, chosen, identity.name)
    if principal is None:
        raise SignInRequired("Your session grants no tenant: sign in again.")
    tenants = tenants_of(identity.grants)
    return Session(
        principal, principal.tenant or chosen, csrf_token(sealed), tenants, identity.display
    )


def _authenticate(request: Request, action: Action) -> Session:
    sealed = request.cookies.get(OIDC_COOKIE)
    if sealed:
        session = _oidc_session(request, sealed)
        return _checked(session, action)
    secret = request.cookies.get(SESSION_COOKIE)
    if not secret:
        raise SignInRequired()
    try:
        principal = context_of(request).service.tokens.authenticate(secret)
    except Unauthenticated as error:
        raise SignInRequired("Your session ended: the token is invalid or was revoked.") from error
    tenant = principal.tenant or request.cookies.get(TENANT_COOKIE) or ""
    return _checked(Session(principal, tenant, csrf_token(secret)), action)


def for_tenant(request: Request, tenant: str) -> None:
    """Over shards: this request's context (api.context.context_of) is its tenant's shard's."""
    ctx = context_of(request)
    if ctx.tenant_service is not None:
        request.state.cronplane = replace(ctx, service=ctx.service_for(tenant))


def _checked(session: Session, action: Action) -> Session:
    """`session` if its principal may do `action` in its tenant; the refusal otherwise."""
    principal, tenant = session.principal, session.tenant
    if not tenant:
        # A platform session before it chose a tenant: what needs none works (the
        # Tenants page, quotas, sign-out); the rest waits for a choice there.
        if action not in PLATFORM_ONLY and action is not Action.USE:
            raise TenantRequired()
        try:
            check(principal, None, action)
        except CronplaneError as error:
            raise PageRefused(error) from error
        return session
    try:
        check(principal, tenant, action)
    except CronplaneError as error:
        raise PageRefused(error) from error
    return session


async def _csrf_given(request: Request) -> str | None:
    header = request.headers.get(CSRF_HEADER)
    if header:
        return header
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        # Starlette caches the parsed form: the route's Form() parameters reuse it.
        value = (await request.form()).get(CSRF_FIELD)
        return value if isinstance(value, str) else None
    return None


def authorizer(action: Action) -> Callable[[Request], Awaitable[Session]]:
    """The dependency of a page that needs `action`: session, access check, CSRF on writes."""

    async def authorize(request: Request) -> Session:
        session = await run_in_threadpool(_authenticate, request, action)
        if session.tenant:
            # Over shards, the page reads and writes the shard its tenant lives on.
            await run_in_threadpool(for_tenant, request, session.tenant)
        if request.method not in SAFE_METHODS and not same(
            await _csrf_given(request), session.csrf
        ):
            raise PageRefused(
                CsrfRejected(
                    "the form's CSRF token is missing or stale: reload the page and try again",
                    {"field": CSRF_FIELD},
                )
            )
        return session

    authorize.__name__ = f"ui_authorize_{action.value}"
    setattr(authorize, RULE_ATTRIBUTE, action)
    return authorize


Reader = Annotated[Session, Depends(authorizer(Action.READ))]
Creator = Annotated[Session, Depends(authorizer(Action.CREATE))]
Updater = Annotated[Session, Depends(authorizer(Action.UPDATE))]
Toggler = Annotated[Session, Depends(authorizer(Action.TOGGLE))]
Deleter = Annotated[Session, Depends(authorizer(Action.DELETE))]
Runner = Annotated[Session, Depends(authorizer(Action.RUN))]
User = Annotated[Session, Depends(authorizer(Action.USE))]
