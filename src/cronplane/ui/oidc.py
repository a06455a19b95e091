"""Sign in through the OIDC provider (authorization code flow with PKCE), and the header's
tenant switcher of a user whose grants name several tenants.

    GET  /login/oidc            Public   a new flow: state, nonce, PKCE verifier in the flow
                                         cookie; the browser goes to the provider
    GET  /login/oidc/callback   Public   the provider sends the browser back with a code: the
                                         checks (state, code, ID token, role map); the session
    POST /session/tenant        User     view another tenant the session's grants name

Refusals are the sign-in page with the coded error, and no session: X401390OIDREJ (a
check failed, `detail.check` names it), X403390OIDROL (no role maps), X503390OIDDWN (the
provider did not answer). Without CRONPLANE_OIDC_ISSUER the two sign-in routes are 404.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from authlib.common.security import generate_token
from fastapi import Form, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.auth import Public
from cronplane.api.context import context_of
from cronplane.core.grants import default_tenant
from cronplane.errors import CronplaneError, OidcNoRole, RouteNotFound, TenantNotFound
from cronplane.ui.oidc_provider import rejected
from cronplane.ui.oidc_session import (
    FLOW_COOKIE,
    FLOW_SECONDS,
    OIDC_COOKIE,
    OidcIdentity,
    OidcSignIn,
    actor_name,
    sign_in_of,
)
from cronplane.ui.route import page_router
from cronplane.ui.session import (
    SESSION_COOKIE,
    TENANT_COOKIE,
    User,
    same,
    set_tenant,
)
from cronplane.ui.signin import safe_next, signin_page

router = page_router()
FLOW_PATH = "/login/oidc"


def _configured(request: Request) -> OidcSignIn:
    sign_in = sign_in_of(request)
    if sign_in is None:
        raise RouteNotFound("OIDC sign-in is not configured here", {"path": request.url.path})
    return sign_in


def _redirect_uri(request: Request, sign_in: OidcSignIn) -> str:
    return sign_in.settings.redirect_url or str(request.url_for("oidc_callback"))


@router.get(FLOW_PATH, dependencies=[Public])
def oidc_start(request: Request, next: str = "/") -> Response:
    """Start a sign-in: remember the flow in a sealed cookie, send the browser to the provider."""
    sign_in = _configured(request)
    now = context_of(request).clock.now()
    flow = {
        "state": generate_token(32),
        "nonce": generate_token(32),
        "verifier": generate_token(64),  # PKCE: 64 characters of [A-Za-z0-9]
        "next": safe_next(next),
        "redirect_uri": _redirect_uri(request, sign_in),
    }
    try:
        location = sign_in.provider.authorization_url(
            flow["redirect_uri"], flow["state"], flow["nonce"], flow["verifier"]
        )
    except CronplaneError as error:
        return signin_page(request, next_path=flow["next"], error=error, status_code=error.status)
    response = RedirectResponse(location, status_code=303)
    # SameSite=Lax, not Strict: the provider sends the browser back to the callback from
    # its own site, a cross-site navigation on which a Strict cookie is not sent.
    response.set_cookie(
        FLOW_COOKIE,
        sign_in.seal_flow(flow, now),
        max_age=FLOW_SECONDS,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path=FLOW_PATH,
    )
    return response


def identity_of(sign_in: OidcSignIn, claims: dict[str, Any], now: datetime) -> OidcIdentity:
    """The session's identity from checked claims; OidcNoRole when the role map gives none."""
    values: Any = claims
    for part in sign_in.settings.roles_claim.split("."):  # `realm_access.roles` (Keycloak)
        values = values.get(part) if isinstance(values, dict) else None
    held: list[Any] = (
        [values] if isinstance(values, str) else values if isinstance(values, list) else []
    )
    grants = sign_in.settings.role_map.grants_for(str(value) for value in held)
    name = actor_name(claims)
    if not grants:
        raise OidcNoRole(
            f"{name} signed in at the provider, but no value of the "
            f"{sign_in.settings.roles_claim!r} claim maps to a role here: ask an administrator "
            "to add one to CRONPLANE_OIDC_ROLE_MAP",
            {"claim": sign_in.settings.roles_claim},
        )
    token_end = datetime.fromtimestamp(int(claims["exp"]), now.tzinfo)
    display = claims.get("name")
    return OidcIdentity(
        subject=str(claims["sub"]),
        name=name,
        display=display[:120] if isinstance(display, str) else name,
        grants=grants,
        expires=min(token_end, now + sign_in.max_age),
    )


def _check_flow(
    request: Request, sign_in: OidcSignIn, now: datetime, state: str, code: str, error: str
) -> dict[str, str]:
    flow = sign_in.flow(request.cookies.get(FLOW_COOKIE), now)
    if flow is None:
        raise rejected("state", "this sign-in expired or began in another browser: start it again")
    if not same(state, flow["state"]):
        raise rejected("state", "the answer's state is not this browser's sign-in")
    if error:
        raise rejected("provider", f"the provider refused the sign-in ({error[:60]})")
    if not code:
        raise rejected("code", "the provider's answer carries no authorization code")
    return flow


def _complete(request: Request, state: str, code: str, error: str) -> Response:
    sign_in = _configured(request)
    now = context_of(request).clock.now()
    next_path = "/"
    try:
        flow = _check_flow(request, sign_in, now, state, code, error)
        next_path = flow["next"]
        id_token, access = sign_in.provider.exchange(code, flow["verifier"], flow["redirect_uri"])
        claims = sign_in.provider.verify(id_token, access, flow["nonce"], now)
        identity = identity_of(sign_in, claims, now)
    except CronplaneError as refusal:
        page = signin_page(request, next_path=next_path, error=refusal, status_code=refusal.status)
        page.delete_cookie(FLOW_COOKIE, path=FLOW_PATH)
        return page
    tenant = default_tenant(identity.grants)
    if not tenant:
        next_path = "/tenants" if next_path == "/" else next_path
    response = RedirectResponse(next_path, status_code=303)
    secure = request.url.scheme == "https"
    # SameSite=Lax, not Strict: this answer ends a navigation that began at the provider's
    # site, and Chromium treats the redirect that follows as cross-site too: a Strict
    # cookie set here would not be sent there, and the user would land on the sign-in
    # page. Lax still keeps it off other sites' POSTs (CSRF, checked on every write
    # besides) and off their subrequests; GET pages change nothing.
    response.set_cookie(
        OIDC_COOKIE,
        sign_in.seal_identity(identity, now),
        max_age=max(1, int((identity.expires - now).total_seconds())),
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    response.delete_cookie(FLOW_COOKIE, path=FLOW_PATH)
    response.delete_cookie(SESSION_COOKIE, path="/")
    if tenant:
        set_tenant(response, request, tenant)
    else:
        response.delete_cookie(TENANT_COOKIE, path="/")
    return response


@router.get(FLOW_PATH + "/callback", dependencies=[Public], name="oidc_callback")
def oidc_callback(request: Request, state: str = "", code: str = "", error: str = "") -> Response:
    """The provider's answer: every check, then the session (or the refusal page). A sync
    route: the provider's answers and the clock are read in the thread pool."""
    return _complete(request, state[:512], code[:2048], error[:200])


@router.post("/session/tenant")
def switch_tenant(
    request: Request, session: User, tenant: Annotated[str, Form(max_length=64)] = ""
) -> Response:
    """View another of the session's tenants (an OIDC user with grants in several)."""
    chosen = tenant.strip()
    if chosen not in session.tenants:
        raise TenantNotFound(f"tenant {chosen!r} not found", {"tenant": chosen})
    response = RedirectResponse("/", status_code=303)
    set_tenant(response, request, chosen)
    return response
