"""Job versions over the HTTP API (api/job_versions.py): the same methods and answers
as the local service's (service.job_versions), decoded with the codec."""

from __future__ import annotations

from cronplane.client.http import RemoteHTTP
from cronplane.core.codec import from_document
from cronplane.core.job_versions import JobVersion
from cronplane.service import JobRollback, JobVersionDiff


class RemoteJobVersions(RemoteHTTP):
    """List, diff and roll back jobs' versions (the token is the actor)."""

    def list_job_versions(
        self, tenant: str, stack: str, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[JobVersion]:
        """GET …/jobs/{stack}/{name}/versions."""
        params = {"limit": limit, "before": before}
        path = self._job(tenant, stack, name) + "/versions"
        answer = self._request("GET", path, params=params)
        return [from_document(JobVersion, item) for item in answer["items"]]

    def get_job_version(self, tenant: str, stack: str, name: str, number: int) -> JobVersion:
        """GET …/versions/{number}."""
        path = self._job(tenant, stack, name) + f"/versions/{number}"
        return from_document(JobVersion, self._request("GET", path))

    def diff_job_versions(
        self,
        tenant: str,
        stack: str,
        name: str,
        first: int | None = None,
        second: int | None = None,
    ) -> JobVersionDiff:
        """GET …/diff?from&to."""
        params = {"from": first, "to": second}
        path = self._job(tenant, stack, name) + "/diff"
        return from_document(JobVersionDiff, self._request("GET", path, params=params))

    def rollback_job(
        self,
        tenant: str,
        stack: str,
        name: str,
        *,
        to: int,
        actor: str,
        revision: int | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> JobRollback:
        """POST …/rollback."""
        body = {"to": to, "dry_run": dry_run, "reason": reason}
        path = self._job(tenant, stack, name) + "/rollback"
        answer = self._request("POST", path, body=body, revision=revision)
        return from_document(JobRollback, answer)
