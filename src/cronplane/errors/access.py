"""What the caller may not do: forbidden targets and addresses, and tenant quotas."""

from __future__ import annotations

from cronplane.errors.base import Forbidden, QuotaExceeded, error_code


class CommandTargetsOff(Forbidden):
    """A `command:` job or item in an installation that has not enabled them."""

    code = error_code(
        "X403250CMDOFF",
        "command: targets are off in this installation (CRONPLANE_ALLOW_COMMAND_TARGETS=1)",
    )


class CommandJobForbidden(Forbidden):
    """Creating or changing a `command:` job by a caller that is not a platform admin."""

    code = error_code("X403251CMDADM", "only a platform admin may create or change a command: job")


class PythonTargetForbidden(Forbidden):
    """A `python:` target whose module (or what its attribute path reaches) is not one the
    installation allows (CRONPLANE_PYTHON_TARGETS): refused at create and in the worker."""

    code = error_code(
        "X403252PYDENY", "python: target outside the modules this installation allows"
    )


class OutboundAddressDenied(Forbidden):
    """A webhook target or alert channel whose host is (or resolves to) an address the
    platform denies (core.outbound: loopback, private, link-local, ... unless
    CRONPLANE_OUTBOUND_ALLOW allows it); the message names the host and the address."""

    code = error_code("X403270OUTDNY", "outbound address denied; detail: host, address, setting")


class ScheduleQuotaExceeded(QuotaExceeded):
    """A create or sync that would take the tenant past max_schedules."""

    code = error_code("X403260QTASCH", "tenant quota max_schedules reached; detail: limit, value")


class JobQuotaExceeded(QuotaExceeded):
    """A job registration or install that would take the tenant past max_jobs."""

    code = error_code("X403261QTAJOB", "tenant quota max_jobs reached; detail: limit, value")


class IntervalUnderQuota(QuotaExceeded):
    """A cron that fires more often than the tenant's min_interval quota allows."""

    code = error_code(
        "X403262QTAINT", "schedule fires more often than the tenant's min_interval quota"
    )


class QueueQuotaExceeded(QuotaExceeded):
    """A run now, retry or backfill that would take the tenant's waiting items past max_queued."""

    code = error_code("X429260QTAQUE", "tenant quota max_queued reached: retry when items have run")
