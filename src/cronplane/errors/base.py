"""The error tree's root and its branches: the classes every specific error derives from,
and the few codes that stand alone (the tree is in the package's docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cronplane.codes import Code, declare
from cronplane.exits import EXIT_QUOTA, exit_code_for_status


class CronplaneError(Exception):
    """Base of every coded error: `{"code", "message", "detail"}`."""

    code: ClassVar[Code]
    # An exit code of the class's own, where its status's would mislead (quotas).
    exit_override: ClassVar[int | None] = None

    def __init__(self, message: str, detail: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail: dict[str, Any] = dict(detail or {})

    @property
    def status(self) -> int:
        """The HTTP status this error answers with."""
        return self.code.status

    @property
    def exit_code(self) -> int:
        """The CLI exit code of this error's class."""
        if self.exit_override is not None:
            return self.exit_override
        return exit_code_for_status(self.code.status)

    def to_dict(self) -> dict[str, Any]:
        """The JSON body every surface returns for this error."""
        return {"code": self.code.text, "message": self.message, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.code.text}: {self.message}"


def error_code(text: str, summary: str) -> Code:
    return declare(text, summary, "error")


class InvalidInput(CronplaneError):
    """Input that is refused before anything is written."""


class Unauthenticated(CronplaneError):
    """No valid credentials were presented."""

    code = error_code("X401001AUTHRQ", "authentication required or token invalid")


class Forbidden(CronplaneError):
    """The credentials lack the permission this action needs."""

    code = error_code("X403001FORBID", "forbidden: the role lacks the permission")


class QuotaExceeded(CronplaneError):
    """A write that would take a tenant past one of its quotas (core.quotas); nothing is
    written. The detail names the limit, its value and the tenant."""

    exit_override = EXIT_QUOTA

    @classmethod
    def of(cls, tenant: str, limit: str, value: int, message: str, **detail: Any) -> QuotaExceeded:
        """The refusal, its message and detail naming the tenant, the limit and its value."""
        return cls(
            f"{message}: tenant {tenant!r} quota {limit} is {value}",
            {"tenant": tenant, "limit": limit, "value": value, **detail},
        )


def exit_code_of(code: Code) -> int:
    """The CLI exit code of a declared error code: its class's (the codes table)."""
    pending: list[type[CronplaneError]] = [CronplaneError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__dict__.get("code") is code and cls.exit_override is not None:
            return cls.exit_override
    return exit_code_for_status(code.status)


class NotFound(CronplaneError):
    """Something named does not exist in the caller's tenant."""


class MethodNotAllowed(CronplaneError):
    """The path exists but not with that HTTP method."""

    code = error_code("X405001METHOD", "HTTP method not allowed on this path")


class Conflict(CronplaneError):
    """The action conflicts with the current state."""


class InvalidState(Conflict):
    """The action does not apply to the object's current state."""

    code = error_code("X409905STATEX", "action not allowed in the current state")


class StaleRevision(CronplaneError):
    """An update carried a revision that is no longer current."""

    code = error_code("X412001REVSTL", "stale revision: the row changed since it was read")


class Unavailable(CronplaneError):
    """The database cannot be reached."""

    code = error_code("X503001DBDOWN", "database unavailable")


class InternalError(CronplaneError):
    """An unexpected failure (a bug); the API answers it coded, never with a bare 500."""

    code = error_code("X500001INTERN", "internal error: a bug, logged with its request")


class RunTimedOut(CronplaneError):
    """A target ran past its item's timeout and was stopped: the item's error, an attempt used."""

    code = error_code(
        "X408203RUNTMO",
        "run timed out: the target ran past its timeout (killed in a process pool; a thread runs to its end)",
    )


class ContainerEngineMissing(CronplaneError):
    """A `container:` item on a worker without podman or docker: it fails unrun."""

    code = error_code(
        "X503253CTRENG", "no container engine on this worker: install podman or docker"
    )
