"""Schedule versions over the HTTP API (api/versions.py): the same methods and answers
as the local service's (service.versions), decoded with the codec."""

from __future__ import annotations

from cronplane.client.http import RemoteHTTP
from cronplane.core.codec import from_document
from cronplane.core.model import Schedule, Scope
from cronplane.core.versions import Version
from cronplane.service import Rollback, VersionDiff


class RemoteVersions(RemoteHTTP):
    """List, diff, roll back and restore schedules' versions (the token is the actor)."""

    def list_versions(
        self, scope: Scope, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[Version]:
        """GET …/versions."""
        params = {"limit": limit, "before": before}
        answer = self._request("GET", self._schedule(scope, name) + "/versions", params=params)
        return [from_document(Version, item) for item in answer["items"]]

    def get_version(self, scope: Scope, name: str, number: int) -> Version:
        """GET …/versions/{number}."""
        path = self._schedule(scope, name) + f"/versions/{number}"
        return from_document(Version, self._request("GET", path))

    def diff_versions(
        self, scope: Scope, name: str, first: int | None = None, second: int | None = None
    ) -> VersionDiff:
        """GET …/diff?from&to."""
        params = {"from": first, "to": second}
        answer = self._request("GET", self._schedule(scope, name) + "/diff", params=params)
        return from_document(VersionDiff, answer)

    def rollback_schedule(
        self,
        scope: Scope,
        name: str,
        *,
        to: int,
        actor: str,
        revision: int | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> Rollback:
        """POST …/rollback."""
        body = {"to": to, "dry_run": dry_run, "reason": reason}
        path = self._schedule(scope, name) + "/rollback"
        return from_document(Rollback, self._request("POST", path, body=body, revision=revision))

    def restore_schedule(
        self, scope: Scope, name: str, *, actor: str, reason: str | None = None
    ) -> Schedule:
        """POST …/restore."""
        path = self._schedule(scope, name) + "/restore"
        return from_document(Schedule, self._request("POST", path, body={"reason": reason}))
