"""Sign in with an API token, and sign out.

The token is checked with the same `TokenService.authenticate` and
`core.access.check` (READ on the tenant) as every API call; a platform token
may name the tenant to view, or choose one afterwards on the Tenants page. On success the token goes into the session
cookie (see `cronplane.ui.session`) and the browser goes where it was headed.
With CRONPLANE_OIDC_ISSUER set, the page also offers "Sign in with <provider>"
(`cronplane.ui.oidc`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from cronplane.api.auth import Public
from cronplane.api.context import context_of
from cronplane.core.access import Action, check
from cronplane.core.validation import validate_name
from cronplane.errors import CronplaneError
from cronplane.ui.oidc_session import sign_in_of
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import (
    LOGIN_CSRF_COOKIE,
    CsrfRejected,
    User,
    clear_session,
    new_signin_csrf,
    same,
    set_session,
)

router = page_router()
MAX_TOKEN_FIELD = 256
MAX_TENANT_FIELD = 64


def safe_next(target: str | None) -> str:
    """A local path to go to after sign-in; anything else (other sites) becomes `/`."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


def signin_page(
    request: Request,
    *,
    next_path: str,
    notice: str = "",
    error: CronplaneError | None = None,
    tenant: str = "",
    status_code: int = 200,
) -> Response:
    """The sign-in page (token form, and the OIDC button when configured) with a fresh
    double-submit CSRF cookie."""
    csrf = new_signin_csrf()
    oidc = sign_in_of(request)
    response = render(
        request,
        "signin.html",
        {
            "csrf": csrf,
            "next": next_path,
            "notice": notice,
            "error": error_context(error),
            "tenant": tenant,
            "oidc_name": oidc.settings.shown_name if oidc is not None else "",
        },
        status_code=status_code,
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        csrf,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.get("/login", dependencies=[Public])
def signin_form(request: Request, next: str = "/", reason: str = "") -> Response:
    """The sign-in form."""
    return signin_page(request, next_path=safe_next(next), notice=reason[:200])


@router.post("/login", dependencies=[Public])
async def signin(
    request: Request,
    token: Annotated[str, Form(max_length=MAX_TOKEN_FIELD)] = "",
    tenant: Annotated[str, Form(max_length=MAX_TENANT_FIELD)] = "",
    csrf: Annotated[str, Form(max_length=MAX_TOKEN_FIELD)] = "",
    next: Annotated[str, Form(max_length=2048)] = "/",
) -> Response:
    """Check the token; on success set the session cookie and go on."""
    next_path = safe_next(next)
    tenant = tenant.strip()
    try:
        if not same(csrf, request.cookies.get(LOGIN_CSRF_COOKIE)):
            raise CsrfRejected("the sign-in form expired: try again", {"field": "csrf"})
        principal = await run_in_threadpool(
            context_of(request).service.tokens.authenticate, token.strip()
        )
        chosen = principal.tenant or tenant
        if chosen:
            if not principal.tenant:
                validate_name(chosen, "tenant")
            check(principal, chosen, Action.READ)
        else:
            # A platform token without a tenant chooses one on the Tenants page.
            check(principal, None, Action.TENANTS)
            next_path = "/tenants" if next_path == "/" else next_path
    except CronplaneError as error:
        return signin_page(
            request, next_path=next_path, error=error, tenant=tenant, status_code=error.status
        )
    response = RedirectResponse(next_path, status_code=303)
    set_session(response, request, token.strip(), None if principal.tenant else chosen or None)
    return response


@router.post("/logout")
def signout(session: User) -> Response:
    """Forget the session (the token itself stays valid until revoked)."""
    response = RedirectResponse("/login?reason=Signed+out.", status_code=303)
    clear_session(response)
    return response
