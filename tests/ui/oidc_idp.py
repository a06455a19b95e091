"""A small OpenID Connect provider for the tests, served over real HTTP on 127.0.0.1.

A Starlette app: discovery, JWKS, an authorize page with a username form (the user
approves by signing in), and a token endpoint that checks the client's secret, the
one-time code, the redirect URI and the PKCE verifier (S256, authlib's
`create_s256_code_challenge`), then signs an RS256 ID token with joserfc (authlib's JOSE
library since authlib.jose was deprecated). `tamper` changes the next ID tokens' claims
(a value None removes the claim) and `signing_key` may be swapped for a key the JWKS does
not hold: the negative tests use both.
"""

from __future__ import annotations

import base64
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import urlencode

import uvicorn
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from cronplane.core.grants import parse_role_map
from cronplane.settings import OidcSettings

CLIENT_ID = "cronplane-console"
CLIENT_SECRET = "zz-client-secret"
KEY_ID = "zz-key-1"
PROVIDER_NAME = "Test IdP"
ROLE_MAP = (
    "zz-editors=demo:editor, zz-viewers=demo:viewer, "
    "zz-multi=demo:operator, zz-multi=zz-oidc-other:viewer, zz-platform=*:viewer"
)
SECRET_KEY = b"zz-oidc-test-secret-key-0123456789"
USERS: dict[str, dict[str, Any]] = {
    "zz-edith": {"email": "edith@example.test", "name": "Edith Editor", "groups": ["zz-editors"]},
    "zz-victor": {
        "email": "victor@example.test",
        "name": "Victor Viewer",
        "groups": ["zz-viewers"],
    },
    "zz-multi": {"email": "multi@example.test", "name": "Mo Multi", "groups": ["zz-multi"]},
    "zz-plato": {
        "email": "plato@example.test",
        "name": "Plato Platform",
        "groups": ["zz-platform"],
    },
    "zz-nobody": {"email": "nobody@example.test", "name": "No Body", "groups": ["staff"]},
}


def new_key(kid: str = KEY_ID) -> RSAKey:
    """An RS256 signing key with key id `kid`."""
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


@dataclass
class Provider:
    """The provider's state: its key, the codes it issued, and the tests' knobs."""

    url: str = ""
    key: RSAKey = field(default_factory=new_key)
    signing_key: RSAKey | OctKey | None = None  # None: `key` (the one the JWKS publishes)
    algorithm: str = "RS256"
    tamper: dict[str, Any] = field(default_factory=dict)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        """Back to honest answers."""
        with self.lock:
            self.tamper = {}
            self.signing_key = None
            self.algorithm = "RS256"

    def settings(self, **changes: Any) -> OidcSettings:
        """cronplane's settings for this provider."""
        given: dict[str, Any] = {
            "issuer": self.url,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "role_map": parse_role_map(ROLE_MAP),
            "secret_key": SECRET_KEY,
            "provider_name": PROVIDER_NAME,
        }
        return OidcSettings(**{**given, **changes})

    def discovery(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.url,
                "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token",
                "jwks_uri": f"{self.url}/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    def jwks(self, request: Request) -> Response:
        return JSONResponse({"keys": [self.key.as_dict(private=False)]})

    async def authorize(self, request: Request) -> Response:
        if request.method == "GET":
            params = dict(request.query_params)
            if params.get("response_type") != "code" or params.get("client_id") != CLIENT_ID:
                return HTMLResponse("bad request", status_code=400)
            if params.get("code_challenge_method") != "S256":
                return HTMLResponse("PKCE S256 required", status_code=400)
            hidden = "".join(
                f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">'
                for k, v in params.items()
            )
            return HTMLResponse(
                "<!doctype html><title>Test IdP</title><h1>Test IdP</h1>"
                f'<form method="post" action="/authorize">{hidden}'
                '<label for="username">Username</label><input id="username" name="username">'
                '<button type="submit">Approve</button></form>'
            )
        form = {k: str(v) for k, v in (await request.form()).items()}
        user = form.get("username", "")
        if user not in USERS:
            return HTMLResponse("unknown user", status_code=401)
        code = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = {**form, "user": user}
        query = urlencode({"code": code, "state": form.get("state", "")})
        return RedirectResponse(f"{form['redirect_uri']}?{query}", status_code=303)

    async def token(self, request: Request) -> Response:
        basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {basic}":
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        form = {k: str(v) for k, v in (await request.form()).items()}
        with self.lock:
            issued = self.codes.pop(form.get("code", ""), None)  # one use only
        verifier = form.get("code_verifier", "")
        if (
            issued is None
            or form.get("grant_type") != "authorization_code"
            or form.get("redirect_uri") != issued["redirect_uri"]
            or create_s256_code_challenge(verifier) != issued["code_challenge"]
        ):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        now = int(time.time())
        user = USERS[issued["user"]]
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": CLIENT_ID,
            "sub": f"sub-{issued['user']}",
            "email_verified": True,
            **user,
            "nonce": issued["nonce"],
            "iat": now,
            "exp": now + 600,
        }
        with self.lock:
            claims.update(self.tamper)
            key, algorithm = self.signing_key or self.key, self.algorithm
        claims = {k: v for k, v in claims.items() if v is not None}
        header = {"alg": algorithm, "kid": self.key.kid or KEY_ID}
        id_token = jwt.encode(header, claims, key, algorithms=[algorithm])
        answer = {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer"}
        return JSONResponse({**answer, "id_token": id_token, "expires_in": 600})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self.discovery),
                Route("/jwks", self.jwks),
                Route("/authorize", self.authorize, methods=["GET", "POST"]),
                Route("/token", self.token, methods=["POST"]),
            ]
        )


@dataclass(frozen=True)
class OidcWorld:
    """The console with OIDC sign-in over the shared world's database, and its provider."""

    url: str
    provider: Provider
    world: Any  # ui_support.World


@contextmanager
def served(app: Any) -> Iterator[str]:
    """`app` served by uvicorn in a thread on a free 127.0.0.1 port; its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started:
            break
        time.sleep(0.01)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def providing() -> Iterator[Provider]:
    """A provider served on a free port (its URL is its issuer)."""
    provider = Provider()
    with served(provider.app()) as url:
        provider.url = url
        yield provider
