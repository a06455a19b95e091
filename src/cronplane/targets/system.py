"""`system:` — the housekeeping jobs and alert deliveries, run in the worker with its database."""

from __future__ import annotations

from typing import Any

from cronplane.clock import Clock
from cronplane.service import housekeeping
from cronplane.store.database import Database
from cronplane.targets import RunContext
from cronplane.targets.notify import AlertDelivery
from cronplane.targets.webhook import SecretKeyring


class SystemTarget:
    """Runs `system:expire`, `system:prune` (see cronplane.service.housekeeping) and
    `system:deliver` (cronplane.targets.notify)."""

    def __init__(
        self, database: Database, clock: Clock, keyring: SecretKeyring | None = None
    ) -> None:
        self.database = database
        self.clock = clock
        self.delivery = AlertDelivery(database, clock, keyring or SecretKeyring.from_environ())

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Run one housekeeping task; only the `_system` tenant may use this kind."""
        if context.tenant != housekeeping.SYSTEM_TENANT:
            raise PermissionError("system targets run only for the _system tenant")
        if spec == "expire":
            return housekeeping.expire(self.database, self.clock)
        if spec == "prune":
            days = int(payload.get("retention_days", housekeeping.DEFAULT_RETENTION_DAYS))
            return housekeeping.prune(self.database, self.clock, days)
        if spec == "deliver":
            return self.delivery.deliver(payload, context)
        raise ValueError(f"unknown system task {spec!r}")
