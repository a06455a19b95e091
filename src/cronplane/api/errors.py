"""Every failure answers `{"code", "message", "detail"}` with its code's HTTP status.

- `CronplaneError` (the service's coded errors) -> its own status and body.
- Request validation (pydantic/FastAPI) -> 400 `X400007REQINV`, listing each
  problem by location; never FastAPI's uncoded 422.
- Routing misses -> 404 `X404001NOROUT`, 405 `X405001METHOD` (its `Allow` lists
  every method of the path, across routes).
- Database unreachable or busy -> 503 `X503001DBDOWN`; a value the database
  refuses (a backstop behind the service's own validation) -> 400.
- Anything else is a bug -> 500 `X500001INTERN`, logged with its traceback,
  answered without internals (`InternalErrors` middleware).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cronplane.api.auth import inventory
from cronplane.errors import (
    CronplaneError,
    InternalError,
    InvalidRequest,
    MethodNotAllowed,
    RouteNotFound,
    Unauthenticated,
    Unavailable,
)

log = logging.getLogger("cronplane.api")

MAX_LISTED_PROBLEMS = 20


class _AsciiJSON(JSONResponse):
    """JSON with non-ASCII escaped: a message quoting hostile input (a lone surrogate)
    still encodes, where UTF-8 output would raise while answering."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), default=str).encode()


def error_response(error: CronplaneError, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The JSON answer for a coded error."""
    extra = dict(headers or {})
    if isinstance(error, Unauthenticated):
        extra.setdefault("WWW-Authenticate", "Bearer")
    return _AsciiJSON(error.to_dict(), status_code=error.status, headers=extra)


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """Every method some API route answers on `path` (Starlette's 405 names one route's)."""
    table: list[tuple[re.Pattern[str], str]] | None = getattr(app.state, "allow_table", None)
    if table is None:
        table = [(compile_path(entry.path)[0], entry.method) for entry in inventory(app)]
        app.state.allow_table = table
    return sorted({method for regex, method in table if regex.match(path)})


def _location(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc)


def validation_error(error: RequestValidationError) -> InvalidRequest:
    """A pydantic/FastAPI validation failure as one coded InvalidRequest.

    Only locations, messages and types are echoed back, never the input
    (it may be huge or not JSON-serializable).
    """
    problems = [
        {
            "loc": _location(item.get("loc", ())),
            "msg": str(item.get("msg", "")),
            "type": item.get("type", ""),
        }
        for item in error.errors()[:MAX_LISTED_PROBLEMS]
    ]
    first = problems[0] if problems else {"loc": "", "msg": "invalid request"}
    where = f"{first['loc']}: " if first["loc"] else ""
    return InvalidRequest(f"{where}{first['msg']}", {"problems": problems})


async def _coded(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, CronplaneError)
    return error_response(error)


async def _invalid(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return error_response(validation_error(error))


async def _http(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    if error.status_code == 404:
        coded: CronplaneError = RouteNotFound(f"no API route at {request.url.path}")
    elif error.status_code == 405:
        coded = MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}")
        allowed = allowed_methods(request.app, request.scope.get("path", request.url.path))
        if allowed:
            return error_response(coded, {**(error.headers or {}), "Allow": ", ".join(allowed)})
    elif error.status_code == 401:
        coded = Unauthenticated(str(error.detail))
    elif 400 <= error.status_code < 500:
        coded = InvalidRequest(str(error.detail))
    else:
        log.error("HTTP %s on %s: %s", error.status_code, request.url.path, error.detail)
        coded = InternalError("internal error")
    return error_response(coded, error.headers)


async def _unavailable(request: Request, error: Exception) -> JSONResponse:
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path, error)
    return error_response(Unavailable("the database is unavailable; retry later"))


async def _refused_value(request: Request, error: Exception) -> JSONResponse:
    # The service validates first; reaching here means a rule is missing there.
    log.warning("database refused a value on %s %s: %s", request.method, request.url.path, error)
    return error_response(InvalidRequest("a value was refused by the database"))


def install(app: FastAPI) -> None:
    """Register the handlers and the last-resort middleware on `app`."""
    app.add_exception_handler(CronplaneError, _coded)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http)
    for database_down in (OperationalError, InterfaceError, PoolTimeout):
        app.add_exception_handler(database_down, _unavailable)
    app.add_exception_handler(DataError, _refused_value)


class InternalErrors:
    """ASGI middleware: an unhandled exception becomes a coded 500, logged once.

    Starlette's own last resort answers plain text and re-raises; this one
    answers the error body every client expects and swallows the exception
    (it is logged with its traceback here).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:  # too late for a body of our own; the connection is cut
                raise
            response = error_response(InternalError("internal error"))
            await response(scope, receive, send)
