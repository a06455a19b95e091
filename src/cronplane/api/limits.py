"""Request body size and JSON depth, checked before anything parses the body.

An ASGI middleware: it refuses a declared `Content-Length` over the limit at
once, counts the bytes of a streamed body, and scans a JSON body's nesting
depth (outside strings) before FastAPI's parser sees it — a 100,000-deep
array would otherwise exhaust the parser's recursion and answer 500.

It also refuses a NUL in the query string (`?search=%00`): no stored text holds one
(core.validation.storable_text), and the databases disagreed about it — SQLite matched
every row, PostgreSQL refused the statement.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cronplane.api.context import Limits
from cronplane.api.errors import error_response
from cronplane.errors import InvalidRequest, PayloadTooLarge

_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


def json_depth(body: bytes, limit: int) -> int:
    """Nesting depth of a JSON text, stopping early once it exceeds `limit`.

    Brackets inside strings do not count. Cheap when the body has fewer
    brackets than the limit (it then cannot be deeper).
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif byte in _CLOSE:
            depth -= 1
    return deepest


def _has_nul(query: bytes) -> bool:
    """True when the raw query string decodes to text with a NUL (`%00`, or a raw byte)."""
    return b"\x00" in query or b"%00" in query


class RequestLimits:
    """ASGI middleware enforcing `Limits` on every HTTP request body."""

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _has_nul(scope.get("query_string", b"")):
            error = InvalidRequest(
                "a query parameter holds a NUL character (%00)", {"field": "query"}
            )
            await self._refuse(scope, receive, send, error)
            return
        limit = self.limits.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._refuse(scope, receive, send, _too_large(declared, limit))
            return
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS") and not declared:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(scope, receive, send, _too_large(size, limit))
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        depth = json_depth(body, self.limits.max_json_depth)
        if depth > self.limits.max_json_depth:
            error = InvalidRequest(
                f"request body is nested deeper than {self.limits.max_json_depth} levels",
                {"limit": self.limits.max_json_depth},
            )
            await self._refuse(scope, receive, send, error)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(
        scope: Scope, receive: Receive, send: Send, error: InvalidRequest | PayloadTooLarge
    ) -> None:
        response = error_response(error, {"Connection": "close"})
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(size: int, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"request body of {size} bytes is over the limit of {limit}",
        {"size": size, "limit": limit},
    )
