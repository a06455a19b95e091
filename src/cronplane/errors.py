"""The error tree: one class per code, the class declaring its code.

::

    CronplaneError                       (code, message, detail; status and exit code follow)
    ├── InvalidInput                     400 class, CLI exit 2
    │   ├── ScheduleSyntax               X400003INVSCH  the parser's own rejection
    │   ├── CronRejected                 X400001CRNINV  the service's wrapping of ScheduleSyntax
    │   ├── InvalidPayload               X400002PAYINV
    │   ├── UnknownZone                  X400004ZONINV
    │   ├── UnknownHolidays              X400364HOLINV  a country or subdivision without holidays data
    │   ├── InvalidName                  X400005NAMINV
    │   ├── InvalidManifest              X400006MANINV
    │   ├── YamlOverLimit                X400340YAMLIM  YAML over a loader limit (names it, and the line)
    │   ├── YamlDuplicateKey             X400341YAMDUP  a YAML mapping names a key twice
    │   ├── InvalidRequest               X400007REQINV
    │   ├── InvalidTarget                X400008TGTINV
    │   ├── UnsupportedDatabase          X400009DBUNSP  a database URL not sqlite or postgresql
    │   ├── IntervalTooShort             X400010INTMIN  fires more often than the minimum allows
    │   ├── InvalidJitter                X400100JITINV  jitter not whole seconds >= 0
    │   ├── JitterTooLong                X400101JITLNG  jitter >= the cron's shortest interval
    │   ├── InvalidUntil                 X400102UNTINV  pause until unparsable, not future, or none for missed
    │   ├── InvalidBackfill              X400103BKFRNG  backfill range unparsable or to <= from
    │   ├── BackfillTooLarge             X400104BKFCAP  backfill range over the cap
    │   ├── InvalidWindow                X400150WININV  start_at/end_at not an instant, or end before start
    │   ├── InvalidMaxRuns               X400151RUNINV  max_runs not a whole number >= 1
    │   ├── InvalidAlertRule             X400310ALRINV
    │   ├── InvalidChannel               X400314CHNINV
    │   ├── PayloadTooLarge              X413001TOOBIG
    │   └── InputFileTooLarge            X413340INPBIG  a manifest or importer input over 4 MiB
    ├── Unauthenticated                  X401001AUTHRQ  CLI exit 6
    ├── Forbidden                        X403001FORBID  CLI exit 6
    │   ├── CommandTargetsOff            X403250CMDOFF  `command:` targets not enabled here
    │   ├── CommandJobForbidden          X403251CMDADM  only a platform admin may set one
    │   ├── PythonTargetForbidden        X403252PYDENY  a python: module outside CRONPLANE_PYTHON_TARGETS
    │   └── OutboundAddressDenied        X403270OUTDNY  a webhook/channel address the platform denies
    ├── NotFound                         404 class, CLI exit 3
    │   ├── ScheduleNotFound             X404902SCHNFD
    │   ├── JobNotFound                  X404903JOBNFD
    │   ├── QueueItemNotFound            X404904ITMNFD
    │   ├── TokenNotFound                X404905TOKNFD
    │   ├── TenantNotFound               X404906TENNFD  another tenant: learns nothing
    │   ├── AlertRuleNotFound            X404311ALRNFD
    │   ├── AlertNotFound                X404313ALTNFD
    │   ├── ChannelNotFound              X404315CHNNFD
    │   ├── CalendarNotFound             X404360CALNFD
    │   └── RouteNotFound                X404001NOROUT  no such API path
    ├── MethodNotAllowed                 X405001METHOD  CLI exit 2
    ├── RunTimedOut                      X408203RUNTMO  an item's error: ran past its timeout (never raised to a caller)
    ├── Conflict                         409 class, CLI exit 4
    │   ├── ScheduleExists               X409900SCHDPL
    │   ├── AppOwned                     X409902APPOWN
    │   ├── JobExists                    X409903JOBDPL
    │   ├── JobInactive                  X409904JOBINA
    │   ├── InvalidState                 X409905STATEX
    │   │   └── ItemFinished             X409200ITMFIN  cancel of an item already finished
    │   ├── BackfillOverlap              X409105BKFACT  non-overlapping backfill, item active
    │   ├── AlertRuleExists              X409312ALRDPL
    │   └── ChannelExists                X409316CHNDPL
    ├── StaleRevision                    X412001REVSTL  CLI exit 5
    ├── QuotaExceeded                    a tenant quota (core.quotas), CLI exit 9
    │   ├── ScheduleQuotaExceeded        X403260QTASCH  max_schedules reached
    │   ├── JobQuotaExceeded             X403261QTAJOB  max_jobs reached
    │   ├── IntervalUnderQuota           X403262QTAINT  fires more often than the tenant's min_interval
    │   └── QueueQuotaExceeded           X429260QTAQUE  max_queued reached (a volume: retry later)
    ├── Unavailable                      X503001DBDOWN  CLI exit 7
    ├── ContainerEngineMissing           X503253CTRENG  a container: item on a worker with neither podman nor docker
    └── InternalError                    X500001INTERN  CLI exit 1: a bug, never bad input

Raise the most specific class; never a bare CronplaneError.
"""

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


def _code(text: str, summary: str) -> Code:
    return declare(text, summary, "error")


class InvalidInput(CronplaneError):
    """Input that is refused before anything is written."""


class ScheduleSyntax(InvalidInput, ValueError):
    """The cron parser's rejection; the message quotes the input and names the field."""

    code = _code("X400003INVSCH", "schedule expression rejected by the parser")


class CronRejected(InvalidInput):
    """A cron expression refused by the service (wraps ScheduleSyntax)."""

    code = _code("X400001CRNINV", "cron rejected; the message includes the offending string")


class InvalidPayload(InvalidInput):
    """Payload not a JSON object, too large or deep, or invalid against the job's schema."""

    code = _code(
        "X400002PAYINV", "payload invalid: not an object, over limits, or against the job schema"
    )


class UnknownZone(InvalidInput):
    """Time zone not a known IANA zone."""

    code = _code("X400004ZONINV", "time zone unknown (not an IANA zone)")


class UnknownHolidays(InvalidInput):
    """A holidays region the `holidays` package does not know (core.calendars)."""

    code = _code("X400364HOLINV", "public holidays unknown: no such country or subdivision")


class InvalidName(InvalidInput):
    """A name outside 1-64 characters of letters, digits, `.`, `_`, `-`."""

    code = _code("X400005NAMINV", "name invalid: 1-64 of letters, digits, '.', '_', '-'")


class InvalidManifest(InvalidInput):
    """An app manifest with one or more invalid entries; detail lists each by path."""

    code = _code("X400006MANINV", "app manifest invalid; detail lists every problem with its path")


class YamlOverLimit(InvalidInput):
    """YAML over one of the loader's limits (core.yaml_bounds); detail names it and the line."""

    code = _code(
        "X400340YAMLIM",
        "YAML over a limit (depth, aliases, nodes, documents, integer digits); names it and the line",
    )


class YamlDuplicateKey(InvalidInput):
    """A YAML mapping that names one key twice (the first would be dropped silently)."""

    code = _code("X400341YAMDUP", "YAML mapping names a key twice; detail names the key and line")


class InvalidRequest(InvalidInput):
    """A request that is malformed or carries unknown or out-of-range fields."""

    code = _code("X400007REQINV", "request invalid: malformed, unknown field, or out of range")


class InvalidTarget(InvalidInput):
    """A job target that is not `python:`, `webhook:` or `celery:` well formed."""

    code = _code("X400008TGTINV", "job target invalid")


class UnsupportedDatabase(InvalidInput):
    """A database URL naming a database or driver cronplane does not run on (refused at start)."""

    code = _code("X400009DBUNSP", "database unsupported: use sqlite or postgresql (psycopg)")


class IntervalTooShort(InvalidInput):
    """A schedule that fires more often than the installation's minimum interval."""

    code = _code(
        "X400010INTMIN", "schedule fires more often than the minimum interval; the message names it"
    )


class InvalidJitter(InvalidInput):
    """A jitter that is not whole seconds >= 0."""

    code = _code("X400100JITINV", "jitter invalid: whole seconds >= 0, or null")


class JitterTooLong(InvalidInput):
    """A jitter not shorter than the schedule's shortest interval (fires could reorder)."""

    code = _code("X400101JITLNG", "jitter not shorter than the schedule's shortest interval")


class InvalidUntil(InvalidInput):
    """A pause's `until` unparsable, not in the future, or absent while `missed` is given."""

    code = _code("X400102UNTINV", "pause until invalid: unparsable, past, or missing for missed")


class InvalidBackfill(InvalidInput):
    """A backfill range that is unparsable, empty or reversed (to <= from)."""

    code = _code("X400103BKFRNG", "backfill range invalid: unparsable, or to <= from")


class BackfillTooLarge(InvalidInput):
    """A backfill range holding more occurrences than one request may enqueue."""

    code = _code("X400104BKFCAP", "backfill range holds more occurrences than the cap")


class InvalidWindow(InvalidInput):
    """An active window refused: a bound that is not an ISO 8601 instant, or end before start."""

    code = _code(
        "X400150WININV",
        "active window invalid: start_at/end_at not an instant, or end before start",
    )


class InvalidMaxRuns(InvalidInput):
    """A run limit refused: max_runs must be a whole number >= 1 (or null: no limit)."""

    code = _code("X400151RUNINV", "max_runs invalid: a whole number >= 1, or null for no limit")


class PayloadTooLarge(InvalidInput):
    """A request body over the size limit."""

    code = _code("X413001TOOBIG", "request body too large")


class InputFileTooLarge(InvalidInput):
    """A file given to `app install`/`app sync` or an importer over the input cap."""

    code = _code("X413340INPBIG", "input file over the 4 MiB cap of manifests and importers")


class Unauthenticated(CronplaneError):
    """No valid credentials were presented."""

    code = _code("X401001AUTHRQ", "authentication required or token invalid")


class Forbidden(CronplaneError):
    """The credentials lack the permission this action needs."""

    code = _code("X403001FORBID", "forbidden: the role lacks the permission")


class CommandTargetsOff(Forbidden):
    """A `command:` job or item in an installation that has not enabled them."""

    code = _code(
        "X403250CMDOFF",
        "command: targets are off in this installation (CRONPLANE_ALLOW_COMMAND_TARGETS=1)",
    )


class CommandJobForbidden(Forbidden):
    """Creating or changing a `command:` job by a caller that is not a platform admin."""

    code = _code("X403251CMDADM", "only a platform admin may create or change a command: job")


class PythonTargetForbidden(Forbidden):
    """A `python:` target whose module (or what its attribute path reaches) is not one the
    installation allows (CRONPLANE_PYTHON_TARGETS): refused at create and in the worker."""

    code = _code("X403252PYDENY", "python: target outside the modules this installation allows")


class OutboundAddressDenied(Forbidden):
    """A webhook target or alert channel whose host is (or resolves to) an address the
    platform denies (core.outbound: loopback, private, link-local, ... unless
    CRONPLANE_OUTBOUND_ALLOW allows it); the message names the host and the address."""

    code = _code("X403270OUTDNY", "outbound address denied; detail: host, address, setting")


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


class ScheduleQuotaExceeded(QuotaExceeded):
    """A create or sync that would take the tenant past max_schedules."""

    code = _code("X403260QTASCH", "tenant quota max_schedules reached; detail: limit, value")


class JobQuotaExceeded(QuotaExceeded):
    """A job registration or install that would take the tenant past max_jobs."""

    code = _code("X403261QTAJOB", "tenant quota max_jobs reached; detail: limit, value")


class IntervalUnderQuota(QuotaExceeded):
    """A cron that fires more often than the tenant's min_interval quota allows."""

    code = _code("X403262QTAINT", "schedule fires more often than the tenant's min_interval quota")


class QueueQuotaExceeded(QuotaExceeded):
    """A run now, retry or backfill that would take the tenant's waiting items past max_queued."""

    code = _code("X429260QTAQUE", "tenant quota max_queued reached: retry when items have run")


def exit_code_of(code: Code) -> int:
    """The CLI exit code of a declared error code: its class's (the codes table)."""
    pending: list[type[CronplaneError]] = [CronplaneError]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__dict__.get("code") is code and cls.exit_override is not None:
            return cls.exit_override
    return exit_code_for_status(code.status)


class InvalidAlertRule(InvalidInput, ValueError):
    """An alert rule that cannot be stored (the detail names the field)."""

    code = _code("X400310ALRINV", "alert rule invalid; detail names the field")


class InvalidChannel(InvalidInput, ValueError):
    """An alert channel that cannot be stored (the detail names the field)."""

    code = _code("X400314CHNINV", "alert channel invalid; detail names the field")


class NotFound(CronplaneError):
    """Something named does not exist in the caller's tenant."""


class ScheduleNotFound(NotFound):
    """No schedule with that key or id in the tenant."""

    code = _code("X404902SCHNFD", "schedule not found")


class JobNotFound(NotFound):
    """No job with that name in (tenant, stack)."""

    code = _code("X404903JOBNFD", "job unknown in this tenant and stack")


class QueueItemNotFound(NotFound):
    """No queue item with that id in the tenant."""

    code = _code("X404904ITMNFD", "queue item not found")


class TokenNotFound(NotFound):
    """No API token with that id."""

    code = _code("X404905TOKNFD", "API token not found")


class TenantNotFound(NotFound):
    """A tenant the credentials do not cover: answered as absent, whether it exists or not."""

    code = _code("X404906TENNFD", "tenant not found (or not visible to these credentials)")


class RouteNotFound(NotFound):
    """No API route at that path."""

    code = _code("X404001NOROUT", "no API route at this path")


class AlertRuleNotFound(NotFound):
    """No alert rule with that name in the tenant."""

    code = _code("X404311ALRNFD", "alert rule not found")


class AlertNotFound(NotFound):
    """No alert with that id in the tenant."""

    code = _code("X404313ALTNFD", "alert not found")


class ChannelNotFound(NotFound):
    """No alert channel with that name in the tenant."""

    code = _code("X404315CHNNFD", "alert channel not found")


class CalendarNotFound(NotFound):
    """No business calendar with that name in the tenant."""

    code = _code("X404360CALNFD", "business calendar not found")


class MethodNotAllowed(CronplaneError):
    """The path exists but not with that HTTP method."""

    code = _code("X405001METHOD", "HTTP method not allowed on this path")


class RunTimedOut(CronplaneError):
    """A target ran past its item's timeout and was stopped: the item's error, an attempt used."""

    code = _code(
        "X408203RUNTMO",
        "run timed out: the target ran past its timeout (killed in a process pool; a thread runs to its end)",
    )


class Conflict(CronplaneError):
    """The action conflicts with the current state."""


class ScheduleExists(Conflict):
    """A schedule with the same (tenant, stack, environment, name) exists."""

    code = _code("X409900SCHDPL", "schedule already exists (unique key)")


class AppOwned(Conflict):
    """An `app` row cannot be removed by hand."""

    code = _code("X409902APPOWN", "app-owned schedule: remove it from the manifest, or disable it")


class JobExists(Conflict):
    """A job with that name exists in (tenant, stack)."""

    code = _code("X409903JOBDPL", "job already exists")


class JobInactive(Conflict):
    """The job exists but is inactive."""

    code = _code("X409904JOBINA", "job inactive")


class InvalidState(Conflict):
    """The action does not apply to the object's current state."""

    code = _code("X409905STATEX", "action not allowed in the current state")


class BackfillOverlap(Conflict):
    """A non-overlapping backfill asked while the schedule has an item queued or running."""

    code = _code(
        "X409105BKFACT", "backfill refused: the schedule has an item queued or running (overlap)"
    )


class ItemFinished(InvalidState):
    """A queue item that already finished cannot be cancelled (nothing changes)."""

    code = _code("X409200ITMFIN", "queue item already finished: nothing to cancel")


class AlertRuleExists(Conflict):
    """An alert rule with that name exists in the tenant."""

    code = _code("X409312ALRDPL", "alert rule already exists")


class ChannelExists(Conflict):
    """An alert channel with that name exists in the tenant."""

    code = _code("X409316CHNDPL", "alert channel already exists")


class StaleRevision(CronplaneError):
    """An update carried a revision that is no longer current."""

    code = _code("X412001REVSTL", "stale revision: the row changed since it was read")


class Unavailable(CronplaneError):
    """The database cannot be reached."""

    code = _code("X503001DBDOWN", "database unavailable")


class ContainerEngineMissing(CronplaneError):
    """A `container:` item on a worker without podman or docker: it fails unrun."""

    code = _code("X503253CTRENG", "no container engine on this worker: install podman or docker")


class InternalError(CronplaneError):
    """An unexpected failure (a bug); the API answers it coded, never with a bare 500."""

    code = _code("X500001INTERN", "internal error: a bug, logged with its request")
