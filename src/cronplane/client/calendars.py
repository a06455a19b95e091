"""The remote client's calendar methods (`RemoteService` inherits them): a tenant's
business calendars over `/api/v1/tenants/{tenant}/calendars` (docs/cron.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cronplane.client.http import RemoteHTTP, segment


class RemoteCalendars(RemoteHTTP):
    """Calendar use cases over the HTTP API (the documents as the local service gives them)."""

    @staticmethod
    def _calendars(tenant: str, name: str | None = None) -> str:
        tail = "" if name is None else f"/{segment(name)}"
        return f"/tenants/{segment(tenant)}/calendars{tail}"

    def list_calendars(self, tenant: str) -> list[dict[str, Any]]:
        """GET …/calendars."""
        items: list[dict[str, Any]] = self._request("GET", self._calendars(tenant))["items"]
        return items

    def get_calendar(self, tenant: str, name: str) -> dict[str, Any]:
        """GET …/calendars/{name}."""
        found: dict[str, Any] = self._request("GET", self._calendars(tenant, name))
        return found

    def save_calendar(
        self,
        tenant: str,
        name: str,
        *,
        weekly: Iterable[str] = (),
        dates: Iterable[str] = (),
        holidays: str | None = None,
        description: str | None = None,
        revision: int | None = None,
        actor: str,
    ) -> dict[str, Any]:
        """PUT …/calendars/{name} (the token is the actor)."""
        body = {
            "weekly": list(weekly),
            "dates": list(dates),
            "holidays": holidays,
            "description": description,
            "revision": revision,
        }
        saved: dict[str, Any] = self._request("PUT", self._calendars(tenant, name), body=body)
        return saved

    def remove_calendar(self, tenant: str, name: str, *, actor: str) -> dict[str, Any]:
        """DELETE …/calendars/{name}."""
        removed: dict[str, Any] = self._request("DELETE", self._calendars(tenant, name))
        return removed
