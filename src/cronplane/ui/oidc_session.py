"""The OIDC session: who signed in through the provider, sealed into a cookie.

A console user who signed in through the OIDC provider (cronplane.ui.oidc) holds no API
token: the session cookie carries their identity instead, sealed with the node's
CRONPLANE_SECRET_KEY (Fernet: AES-CBC + HMAC-SHA256, under a key derived for this use
only), so every node with the same key reads it and nobody can read or change it:

    subject   the ID token's `sub`
    name      e-mail (unless `email_verified` is false) or subject: events say `oidc:<name>`
    display   the `name` claim, for the header
    grants    the (tenant, role) pairs the role map gave at sign-in (core.grants)
    expires   min(the ID token's `exp`, sign-in + CRONPLANE_OIDC_SESSION_HOURS)

A cookie that does not open (tampered, another key, or a label of another use) or is
past `expires` is no session: the browser is sent to sign in. The role map is applied at
sign-in; a change to it, or to the user's groups, takes effect at the next sign-in, at
most the session's hours later (changing CRONPLANE_SECRET_KEY ends every session).

The flow cookie carries state, nonce, PKCE verifier and the page to return to from
/login/oidc to the callback, sealed under another label, for 10 minutes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from cryptography.fernet import Fernet, InvalidToken
from fastapi import Request

from cronplane.core.access import parse_role
from cronplane.core.grants import Grant
from cronplane.errors import CronplaneError
from cronplane.settings import OidcSettings
from cronplane.targets.webhook import SecretKeyring
from cronplane.ui.oidc_provider import OidcProvider

OIDC_COOKIE: Final = "cronplane_oidc"
FLOW_COOKIE: Final = "cronplane_oidc_flow"
FLOW_SECONDS: Final = 600
MAX_COOKIE_BYTES: Final = 3800  # browsers keep 4 KiB per cookie
_SESSION_LABEL: Final = "cronplane/ui-oidc-session/v1"
_FLOW_LABEL: Final = "cronplane/ui-oidc-flow/v1"


@dataclass(frozen=True, slots=True)
class OidcIdentity:
    """A user the provider signed in, as the session cookie carries them."""

    subject: str
    name: str
    display: str
    grants: tuple[Grant, ...]
    expires: datetime

    def to_json(self) -> dict[str, Any]:
        """The cookie's content (before sealing)."""
        return {
            "sub": self.subject,
            "name": self.name,
            "display": self.display,
            "grants": [[grant.tenant, grant.role.value] for grant in self.grants],
            "exp": int(self.expires.timestamp()),
        }

    @classmethod
    def from_json(cls, data: Any) -> OidcIdentity | None:
        """The identity in a cookie's content; None when it is not one."""
        try:
            grants = tuple(Grant(tenant, parse_role(role)) for tenant, role in data["grants"])
            return cls(
                subject=str(data["sub"]),
                name=str(data["name"]),
                display=str(data["display"]),
                grants=grants,
                expires=datetime.fromtimestamp(int(data["exp"]), UTC),
            )
        except (KeyError, TypeError, ValueError, CronplaneError):
            return None


def actor_name(claims: dict[str, Any]) -> str:
    """Who events say acted: the e-mail, unless the provider says it is unverified; else
    the subject (a name anyone may set is not an identity)."""
    email = claims.get("email")
    if isinstance(email, str) and email and claims.get("email_verified") is not False:
        return email[:120]
    return str(claims["sub"])[:120]


class OidcSignIn:
    """What an app with OIDC sign-in holds: its settings, the provider, the two seals."""

    def __init__(self, settings: OidcSettings, provider: OidcProvider | None = None) -> None:
        self.settings = settings
        self.provider = provider or OidcProvider(settings)
        keyring = SecretKeyring(settings.secret_key)
        self._session: Fernet = keyring.sealer(_SESSION_LABEL)
        self._flow: Fernet = keyring.sealer(_FLOW_LABEL)

    @property
    def max_age(self) -> timedelta:
        """The longest a session lasts (CRONPLANE_OIDC_SESSION_HOURS)."""
        return timedelta(hours=self.settings.session_hours)

    def seal_identity(self, identity: OidcIdentity, now: datetime) -> str:
        """The session cookie's value."""
        text = json.dumps(identity.to_json(), separators=(",", ":"))
        return self._session.encrypt_at_time(text.encode(), int(now.timestamp())).decode()

    def identity(self, sealed: str, now: datetime) -> OidcIdentity | None:
        """The identity a session cookie holds; None when it does not open or has expired."""
        data = _open(self._session, sealed, now, int(self.max_age.total_seconds()))
        identity = OidcIdentity.from_json(data)
        if identity is None or identity.expires <= now:
            return None
        return identity

    def seal_flow(self, flow: dict[str, str], now: datetime) -> str:
        """The flow cookie's value (state, nonce, verifier, next, redirect_uri)."""
        text = json.dumps(flow, separators=(",", ":"))
        return self._flow.encrypt_at_time(text.encode(), int(now.timestamp())).decode()

    def flow(self, sealed: str | None, now: datetime) -> dict[str, str] | None:
        """The flow a cookie holds; None when missing, tampered or older than 10 minutes."""
        data = _open(self._flow, sealed, now, FLOW_SECONDS)
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return None
        return data


def _open(fernet: Fernet, sealed: str | None, now: datetime, ttl: int) -> Any:
    if not sealed or len(sealed) > MAX_COOKIE_BYTES:
        return None
    try:
        text = fernet.decrypt_at_time(sealed.encode(), ttl, int(now.timestamp()))
        return json.loads(text)
    except (InvalidToken, ValueError):
        return None


def sign_in_of(request: Request) -> OidcSignIn | None:
    """The app's OIDC sign-in; None when CRONPLANE_OIDC_ISSUER is unset."""
    found = getattr(request.app.state, "oidc", None)
    return found if isinstance(found, OidcSignIn) else None
