"""Environments diffed and promoted over the HTTP API (api/environments.py, issue 38): the
same methods and answers as the local service's (service.promotion), decoded with the
codec; and `Environments`, the public client's face of them (`client.environments`)."""

from __future__ import annotations

from collections.abc import Sequence

from cronplane.client.http import RemoteHTTP
from cronplane.core.codec import from_document
from cronplane.core.promotion import EnvironmentDiff
from cronplane.service import PromoteReport


class RemotePromotion(RemoteHTTP):
    """Diff two environments, promote one to another (the token is the actor)."""

    def diff_environments(
        self, tenant: str, from_env: str, to_env: str, *, stack: str | None = None
    ) -> EnvironmentDiff:
        """GET …/environments/diff."""
        params = {"from_env": from_env, "to_env": to_env, "stack": stack}
        path = f"{self._tenant(tenant)}/environments/diff"
        return from_document(EnvironmentDiff, self._request("GET", path, params=params))

    def promote_environment(
        self,
        tenant: str,
        from_env: str,
        to_env: str,
        *,
        actor: str,
        stack: str | None = None,
        only: Sequence[str] | None = None,
        token: str | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> PromoteReport:
        """POST …/environments/promote."""
        body = {
            "from_env": from_env,
            "to_env": to_env,
            "stack": stack,
            "only": None if only is None else list(only),
            "token": token,
            "dry_run": dry_run,
            "reason": reason,
        }
        path = f"{self._tenant(tenant)}/environments/promote"
        return from_document(PromoteReport, self._request("POST", path, body=body))


class Environments:
    """A tenant's environments (`client.environments`): diff two, promote one to another."""

    def __init__(self, service: RemotePromotion, tenant: str, actor: str) -> None:
        self._service = service
        self._tenant = tenant
        self._actor = actor

    def diff(self, from_env: str, to_env: str, *, stack: str | None = None) -> EnvironmentDiff:
        """Each schedule of either environment (of `stack`, else every stack) with its
        status and field differences, and the `token` to pass to `promote`."""
        return self._service.diff_environments(self._tenant, from_env, to_env, stack=stack)

    def promote(
        self,
        from_env: str,
        to_env: str,
        *,
        stack: str | None = None,
        only: Sequence[str] | None = None,
        token: str | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> PromoteReport:
        """Apply `from_env`'s definitions to `to_env`, all or nothing; with `token` (a
        diff's), refused (PromoteConflict) when a row moved since that diff."""
        return self._service.promote_environment(
            self._tenant,
            from_env,
            to_env,
            actor=self._actor,
            stack=stack,
            only=only,
            token=token,
            dry_run=dry_run,
            reason=reason,
        )
