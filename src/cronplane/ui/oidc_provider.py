"""`OidcProvider`: the OpenID Connect provider as the console sees it (a relying party).

    metadata()                   discovery (`<issuer>/.well-known/openid-configuration`), cached
    authorization_url(...)       where the browser signs in: code flow, PKCE S256, state, nonce
    exchange(code, verifier, …)  the token endpoint's ID token (client_secret_basic)
    verify(id_token, …)          the ID token's claims, once every check passed

Checks of `verify`, each refused with OidcSignInRejected naming it (`detail.check`):
the signature, by a key of the provider's JWKS (fetched again once for an unknown key
id: rotation) with an asymmetric algorithm the provider announces (never `none` or an
HMAC); `iss` equal to CRONPLANE_OIDC_ISSUER; `aud` holding the client id (and `azp`
when there are several audiences); `exp` in the future and `iat` present (60 s leeway);
`nonce` equal to the one this browser's flow sent. The claim checks are authlib's
(`authlib.oidc.core.CodeIDToken`), the JOSE work is joserfc's (authlib's own client does
the same since authlib 1.6 deprecated `authlib.jose`). Time comes from the caller.
An unreachable provider, or a discovery document naming another issuer, is
OidcUnavailable (503).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlencode

import httpx
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import (
    ClaimError,
    ExpiredTokenError,
    InvalidKeyIdError,
    JoseError,
)
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from cronplane.errors import OidcSignInRejected, OidcUnavailable
from cronplane.settings import OidcSettings

ALLOWED_ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
LEEWAY_SECONDS: Final = 60
MAX_ANSWER_BYTES: Final = 256 * 1024
# What a refused claim is called on the page (joserfc names the claim).
_CHECKS: Final = {"iss": "issuer", "aud": "audience", "azp": "audience", "nonce": "nonce"}


def rejected(check: str, message: str) -> OidcSignInRejected:
    """The refusal of one sign-in check, for the page and the tests (`detail.check`)."""
    return OidcSignInRejected(f"sign-in refused: {message}", {"check": check})


class OidcProvider:
    """Discovery, the authorization URL, the code exchange and ID token checks."""

    def __init__(self, settings: OidcSettings, *, timeout: float = 5.0) -> None:
        self.settings = settings
        self._timeout = timeout
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._keys: KeySet | None = None

    def _get(self, url: str) -> dict[str, Any]:
        try:
            # No proxies from the environment: the provider is the operator's, reached directly.
            answer = httpx.get(url, timeout=self._timeout, trust_env=False)
            answer.raise_for_status()
            body = answer.json()
        except (httpx.HTTPError, ValueError) as error:
            raise OidcUnavailable(
                f"the OIDC provider did not answer {url}: {type(error).__name__}",
                {"url": url},
            ) from error
        if not isinstance(body, dict) or len(answer.content) > MAX_ANSWER_BYTES:
            raise OidcUnavailable(f"the OIDC provider's answer at {url} is unusable", {"url": url})
        return body

    def metadata(self) -> Mapping[str, Any]:
        """The discovery document (fetched once); OidcUnavailable if it names another issuer
        or lacks an endpoint the code flow needs."""
        with self._lock:
            if self._metadata is not None:
                return self._metadata
        url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"
        found = self._get(url)
        if found.get("issuer") != self.settings.issuer:
            raise OidcUnavailable(
                f"the discovery document names issuer {str(found.get('issuer'))[:80]!r}, "
                f"not CRONPLANE_OIDC_ISSUER {self.settings.issuer!r}",
                {"url": url},
            )
        for endpoint in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(found.get(endpoint), str):
                raise OidcUnavailable(f"the discovery document has no {endpoint}", {"url": url})
        with self._lock:
            self._metadata = found
        return found

    def _key_set(self, *, refresh: bool) -> KeySet:
        with self._lock:
            if self._keys is not None and not refresh:
                return self._keys
        try:
            keys = KeySet.import_key_set(self._get(str(self.metadata()["jwks_uri"])))  # type: ignore[arg-type]
        except JoseError as error:
            raise OidcUnavailable("the OIDC provider's JWKS does not parse", {}) from error
        with self._lock:
            self._keys = keys
        return keys

    def authorization_url(self, redirect_uri: str, state: str, nonce: str, verifier: str) -> str:
        """The provider's sign-in page for this flow (response_type code, PKCE S256)."""
        endpoint = str(self.metadata()["authorization_endpoint"])
        query = {
            "response_type": "code",
            "client_id": self.settings.client_id,
            "redirect_uri": redirect_uri,
            "scope": self.settings.scopes,
            "state": state,
            "nonce": nonce,
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
        }
        separator = "&" if "?" in endpoint else "?"
        return endpoint + separator + urlencode(query)

    def exchange(self, code: str, verifier: str, redirect_uri: str) -> tuple[str, str]:
        """(id_token, access_token) for an authorization code; OidcSignInRejected when
        the provider refuses the code, OidcUnavailable when it does not answer."""
        endpoint = str(self.metadata()["token_endpoint"])
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        auth = (self.settings.client_id, self.settings.client_secret)
        try:
            answer = httpx.post(
                endpoint, data=form, auth=auth, timeout=self._timeout, trust_env=False
            )
        except httpx.HTTPError as error:
            raise OidcUnavailable(
                f"the OIDC provider's token endpoint did not answer: {type(error).__name__}",
                {"url": endpoint},
            ) from error
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if answer.status_code != 200 or not isinstance(body, dict):
            reason = str(body.get("error", answer.status_code) if isinstance(body, dict) else "")
            raise rejected("code", f"the provider refused the authorization code ({reason[:60]})")
        id_token = body.get("id_token")
        if not isinstance(id_token, str):
            raise rejected("id_token", "the provider's answer carries no ID token")
        access = body.get("access_token")
        return id_token, access if isinstance(access, str) else ""

    def _decode(self, id_token: str) -> jwt.Token:
        announced = self.metadata().get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithms = [a for a in announced if a in ALLOWED_ALGORITHMS] or ["RS256"]
        registry = JWSRegistry(algorithms=algorithms, strict_check_header=False)
        try:
            try:
                return jwt.decode(id_token, self._key_set(refresh=False), registry=registry)
            except InvalidKeyIdError:
                return jwt.decode(id_token, self._key_set(refresh=True), registry=registry)
        except JoseError as error:
            raise rejected(
                "signature", f"the ID token's signature does not verify ({error.error})"
            ) from error

    def verify(self, id_token: str, access_token: str, nonce: str, now: datetime) -> dict[str, Any]:
        """The ID token's claims after every check of the module docstring."""
        token = self._decode(id_token)
        claims = CodeIDToken(
            token.claims,
            token.header,
            {
                "iss": {"essential": True, "value": self.settings.issuer},
                "aud": {"essential": True, "value": self.settings.client_id},
            },
            {"nonce": nonce, "client_id": self.settings.client_id, "access_token": access_token},
        )
        try:
            claims.validate(now=int(now.timestamp()), leeway=LEEWAY_SECONDS)
        except ExpiredTokenError as error:
            raise rejected("expiry", "the ID token has expired") from error
        except ClaimError as error:
            check = _CHECKS.get(error.claim, error.claim)
            raise rejected(check, f"the ID token's {error.claim} is wrong or missing") from error
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise rejected("sub", "the ID token names no subject")
        return dict(claims)
