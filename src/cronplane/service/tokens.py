"""API token use cases: create (plaintext shown once), list, revoke, authenticate.

A token is ``cpt_`` followed by 32 random bytes (256 bits, URL-safe base64).
The database keeps only its SHA-256. A slow password hash (bcrypt, argon2)
exists to make guessing a *low-entropy* secret expensive; a 256-bit random
secret cannot be guessed at any speed, so a fast hash loses nothing — and it
lets authentication be one lookup on a unique index, with no per-request key
stretching on the API's hot path. A database dump yields no usable token.

The first characters (``prefix``) are kept in clear so people can tell tokens
apart in `token ls` without the secret.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Final
from uuid import UUID

from cronplane.core.access import Principal, Role, parse_role
from cronplane.core.model import ApiToken
from cronplane.core.validation import validate_name
from cronplane.errors import TokenNotFound, Unauthenticated
from cronplane.events import TOKEN_CREATED, TOKEN_REVOKED
from cronplane.service.base import Context, ServiceBase
from cronplane.store import tokens as store
from cronplane.store.events import append_event

TOKEN_SCHEME: Final = "cpt_"
SECRET_BYTES: Final = 32
PREFIX_LENGTH: Final = 12  # "cpt_" and 8 characters of the secret
MAX_TOKEN_LENGTH: Final = 128  # anything longer is not one of ours; refuse before hashing
# last_used_at is recorded at this granularity (one write per token per interval).
TOUCH_INTERVAL: Final = timedelta(minutes=1)
# Events need a tenant; a platform token's are filed under this (never a valid tenant name).
PLATFORM_TENANT: Final = "*"
MAX_CACHED_TOKENS: Final = 10_000


def hash_token(secret: str) -> str:
    """The stored form of a token: hex SHA-256 of its text."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CreatedToken:
    """The answer to `create`: the row and the plaintext, which is never stored."""

    token: ApiToken
    secret: str


class TokenService(ServiceBase):
    """Token use cases, one transaction each; every change is an event with its actor."""

    def __init__(self, context: Context, *, cache_seconds: float = 0.0) -> None:
        super().__init__(context)
        # digest -> (principal, monotonic deadline): see `authenticate`.
        self.cache_seconds = cache_seconds
        self._cache: dict[str, tuple[Principal, float]] = {}
        self._cache_lock = threading.Lock()

    def create(
        self, *, tenant: str | None, role: str | Role, name: str | None = None, actor: str
    ) -> CreatedToken:
        """Make a token for `tenant` (None: platform) with `role`; the secret is returned once."""
        role = role if isinstance(role, Role) else parse_role(role)
        if tenant is not None:
            validate_name(tenant, "tenant")
        name = validate_name(name or f"{tenant or 'platform'}-{role.value}", "name")
        secret = TOKEN_SCHEME + secrets.token_urlsafe(SECRET_BYTES)
        now = self.clock.now()
        token = ApiToken(
            id=uuid.uuid4(),
            tenant=tenant,
            role=role.value,
            name=name,
            prefix=secret[:PREFIX_LENGTH],
            created_by=actor,
            created_at=now,
            last_used_at=None,
            revoked_at=None,
        )
        with self.database.begin() as conn:
            store.insert_token(conn, token, hash_token(secret))
            append_event(
                conn,
                TOKEN_CREATED,
                tenant=tenant or PLATFORM_TENANT,
                actor=actor,
                now=now,
                message=f"API token {name} ({token.prefix}) created with role {role.value}",
                detail={"token_id": str(token.id), "role": role.value, "name": name},
            )
        return CreatedToken(token, secret)

    def list(self, *, tenant: str | None = None, include_revoked: bool = False) -> list[ApiToken]:
        """Tokens (never secrets), oldest first; `tenant` limits to one tenant's."""
        with self.database.read() as conn:
            return store.list_tokens(conn, tenant=tenant, include_revoked=include_revoked)

    def revoke(self, token_id: UUID | str, *, actor: str) -> ApiToken:
        """Revoke a token at once; TokenNotFound when unknown or revoked already."""
        token_id = _token_id(token_id)
        now = self.clock.now()
        with self.database.begin() as conn:
            if not store.revoke(conn, token_id, now):
                raise TokenNotFound(
                    f"API token {token_id} not found (or revoked already)",
                    {"token_id": str(token_id)},
                )
            token = store.get_by_id(conn, token_id)
            assert token is not None  # just updated, in this transaction
            with self._cache_lock:
                self._cache.clear()  # this process refuses it at once
            append_event(
                conn,
                TOKEN_REVOKED,
                tenant=token.tenant or PLATFORM_TENANT,
                actor=actor,
                now=now,
                message=f"API token {token.name} ({token.prefix}) revoked",
                detail={"token_id": str(token.id)},
            )
        return token

    def authenticate(self, secret: str) -> Principal:
        """The principal a bearer token stands for; Unauthenticated when unknown or revoked.

        The message never says which: a caller cannot probe for revoked tokens.
        With `cache_seconds` > 0 a valid token is remembered that long, saving a
        database read per request; a revocation made elsewhere (another node,
        the CLI) then takes effect within that time, one made here at once.
        """
        if not secret.startswith(TOKEN_SCHEME) or len(secret) > MAX_TOKEN_LENGTH:
            raise Unauthenticated("invalid API token")
        digest = hash_token(secret)
        cached = self._remembered(digest)
        if cached is not None:
            return cached
        principal = self._lookup(digest)
        if self.cache_seconds > 0:
            with self._cache_lock:
                if len(self._cache) > MAX_CACHED_TOKENS:
                    self._cache.clear()
                self._cache[digest] = (principal, self.clock.monotonic() + self.cache_seconds)
        return principal

    def cached(self, secret: str) -> Principal | None:
        """The principal of a token remembered as valid (no I/O); None when not remembered."""
        if self.cache_seconds <= 0 or len(secret) > MAX_TOKEN_LENGTH:
            return None
        return self._remembered(hash_token(secret))

    def _remembered(self, digest: str) -> Principal | None:
        if self.cache_seconds <= 0:
            return None
        # No lock to read: one dict.get is atomic, and writers (under the lock)
        # only add whole entries or clear; this runs on the API's event loop.
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > self.clock.monotonic():
            return cached[0]
        return None

    def _lookup(self, digest: str) -> Principal:
        with self.database.read() as conn:
            token = store.get_by_hash(conn, digest)
        # Looking up by the digest (not the secret) is what keeps the index
        # lookup from being a timing oracle: the caller cannot steer the digest.
        if token is None or not token.active:
            raise Unauthenticated("invalid API token")
        now = self.clock.now()
        if token.last_used_at is None or now - token.last_used_at >= TOUCH_INTERVAL:
            with self.database.begin() as conn:
                store.touch(conn, token.id, now, now - TOUCH_INTERVAL)
        return Principal(
            token_id=token.id, tenant=token.tenant, role=Role(token.role), name=token.name
        )


def _token_id(value: UUID | str) -> UUID:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(value)
    except ValueError:
        raise TokenNotFound(f"API token {value!r} not found", {"token_id": value}) from None
