"""The api_tokens table: row mapping and the statements the token use cases run.

Only hashes are stored; the plaintext exists once, in the answer to `create`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Row, insert, or_, select, update

from cronplane.core.model import ApiToken
from cronplane.store.tables import api_tokens


def token_from_row(row: Row[Any]) -> ApiToken:
    """Map a row of `api_tokens` to ApiToken."""
    m = row._mapping
    return ApiToken(
        id=m["id"],
        tenant=m["tenant"],
        role=m["role"],
        name=m["name"],
        prefix=m["prefix"],
        created_by=m["created_by"],
        created_at=m["created_at"],
        last_used_at=m["last_used_at"],
        revoked_at=m["revoked_at"],
    )


def insert_token(conn: Connection, token: ApiToken, token_hash: str) -> None:
    """Insert one token row with its hash."""
    conn.execute(
        insert(api_tokens).values(
            id=token.id,
            tenant=token.tenant,
            role=token.role,
            name=token.name,
            token_hash=token_hash,
            prefix=token.prefix,
            created_by=token.created_by,
            created_at=token.created_at,
            last_used_at=token.last_used_at,
            revoked_at=token.revoked_at,
        )
    )


def get_by_hash(conn: Connection, token_hash: str) -> ApiToken | None:
    """The token with this hash (revoked or not), by the unique index."""
    row = conn.execute(select(api_tokens).where(api_tokens.c.token_hash == token_hash)).first()
    return None if row is None else token_from_row(row)


def get_by_id(conn: Connection, token_id: UUID) -> ApiToken | None:
    """The token with this id, or None."""
    row = conn.execute(select(api_tokens).where(api_tokens.c.id == token_id)).first()
    return None if row is None else token_from_row(row)


def list_tokens(
    conn: Connection, *, tenant: str | None = None, include_revoked: bool = False
) -> list[ApiToken]:
    """Tokens oldest first; `tenant` limits to that tenant's tokens."""
    query = select(api_tokens).order_by(api_tokens.c.created_at, api_tokens.c.id)
    if tenant is not None:
        query = query.where(api_tokens.c.tenant == tenant)
    if not include_revoked:
        query = query.where(api_tokens.c.revoked_at.is_(None))
    return [token_from_row(row) for row in conn.execute(query)]


def revoke(conn: Connection, token_id: UUID, now: datetime) -> bool:
    """Mark the token revoked; False when it does not exist or was revoked already."""
    result = conn.execute(
        update(api_tokens)
        .where(api_tokens.c.id == token_id, api_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return result.rowcount == 1


def touch(conn: Connection, token_id: UUID, now: datetime, older_than: datetime) -> None:
    """Record a use, only when the last recorded one is before `older_than`.

    Bounding the writes keeps authentication a read on the hot path: a busy
    token costs one UPDATE a minute, not one per request.
    """
    conn.execute(
        update(api_tokens)
        .where(
            api_tokens.c.id == token_id,
            or_(api_tokens.c.last_used_at.is_(None), api_tokens.c.last_used_at < older_than),
        )
        .values(last_used_at=now)
    )
