"""The remote client's HTTP plumbing: one connection pool, coded errors raised again.

`RemoteHTTP` is the base of `client.RemoteService` and its parts
(`client.alerts.RemoteAlerts`, `client.queue.RemoteQueue`): it holds the
httpx client and turns every answer into its decoded JSON, or into the
`CronplaneError` class the server raised (same code, same exit code); a
server that cannot be reached is `Unavailable` (exit 7).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote
from uuid import UUID

import httpx

from cronplane.clock import Clock, SystemClock
from cronplane.core.model import Scope
from cronplane.errors import CronplaneError, InternalError, Unavailable

API_PREFIX: Final = "/api/v1"
DEFAULT_TIMEOUT: Final = 30.0


def _error_classes() -> dict[str, type[CronplaneError]]:
    found: dict[str, type[CronplaneError]] = {}
    pending: list[type[CronplaneError]] = [CronplaneError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        code = cls.__dict__.get("code")
        if code is not None:
            found[code.text] = cls
    return found


ERRORS: Final = _error_classes()


def raise_for(response: httpx.Response) -> None:
    """Raise the coded error an answer carries (the same class the service raised)."""
    if response.is_success:
        return
    try:
        body = response.json()
        code, message, detail = body["code"], body["message"], body.get("detail") or {}
    except (ValueError, KeyError, TypeError):
        raise InternalError(
            f"unexpected answer from the server: HTTP {response.status_code}",
            {"status": response.status_code},
        ) from None
    cls = ERRORS.get(code)
    if cls is None:
        raise InternalError(f"{code}: {message}", {"status": response.status_code, **detail})
    raise cls(message, detail)


def segment(value: str) -> str:
    """One path segment, every reserved character escaped."""
    return quote(value, safe="")


class RemoteHTTP:
    """A cronplane server's API at `url`, with a bearer token."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
        via: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        headers = {"Accept": "application/json"}
        if via:
            # How the changes it makes came (api.origin): the remote CLI says `cli`.
            headers["X-Cronplane-Via"] = via
        if reason:
            # Why (a version's reason): UTF-8, percent-encoded to travel as a header.
            headers["X-Cronplane-Reason"] = quote(reason, safe=" ")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.url = url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    # -- plumbing --------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        revision: int | None = None,
    ) -> Any:
        headers = {} if revision is None else {"If-Match": f'"{revision}"'}
        query = {k: _param(v) for k, v in (params or {}).items() if v is not None}
        try:
            response = self.http.request(
                method,
                API_PREFIX + path,
                content=None if body is None else json.dumps(body),
                headers={**headers, **({"Content-Type": "application/json"} if body else {})},
                params=query,
            )
        except httpx.HTTPError as error:
            raise Unavailable(
                f"cannot reach the cronplane server at {self.url}: {error}", {"url": self.url}
            ) from error
        raise_for(response)
        return response.json()

    @staticmethod
    def _tenant(tenant: str) -> str:
        return f"/tenants/{segment(tenant)}"

    def _schedule(self, scope: Scope, name: str) -> str:
        return (
            f"{self._tenant(scope.tenant)}/schedules/"
            f"{segment(scope.stack)}/{segment(scope.environment)}/{segment(name)}"
        )

    def _job(self, tenant: str, stack: str, name: str) -> str:
        return f"{self._tenant(tenant)}/jobs/{segment(stack)}/{segment(name)}"


def _param(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, UUID):
        return str(value)
    return value
