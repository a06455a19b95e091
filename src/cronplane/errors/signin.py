"""Console sign-in through an OpenID Connect provider (cronplane.ui.oidc): its settings,
its refusals, and an unreachable provider."""

from __future__ import annotations

from cronplane.errors.base import (
    Forbidden,
    InvalidInput,
    Unauthenticated,
    Unavailable,
    error_code,
)


class InvalidOidcSettings(InvalidInput):
    """A CRONPLANE_OIDC_* setting (or the CRONPLANE_SECRET_KEY it needs) missing or
    malformed: the server refuses to start; `detail.field` names the variable."""

    code = error_code("X400390OIDCFG", "OIDC sign-in settings invalid; detail: field")


class OidcSignInRejected(Unauthenticated):
    """An OIDC sign-in that failed a check: state, the provider's answer, or the ID token
    (signature, issuer, audience, expiry, nonce). Nothing is signed in; `detail.check`
    names the check."""

    code = error_code("X401390OIDREJ", "OIDC sign-in rejected; detail: check")


class OidcNoRole(Forbidden):
    """A user the provider signed in whose claims map to no tenant and role
    (CRONPLANE_OIDC_ROLE_MAP): refused, not signed in."""

    code = error_code("X403390OIDROL", "OIDC user maps to no role (CRONPLANE_OIDC_ROLE_MAP)")


class OidcUnavailable(Unavailable):
    """The OIDC provider did not answer (discovery, keys or token endpoint) or answered
    something unusable: sign in with a token meanwhile."""

    code = error_code("X503390OIDDWN", "OIDC provider unavailable")
