"""Something named that does not exist in the caller's tenant (404, CLI exit 3)."""

from __future__ import annotations

from cronplane.errors.base import NotFound, error_code


class ScheduleNotFound(NotFound):
    """No schedule with that key or id in the tenant."""

    code = error_code("X404902SCHNFD", "schedule not found")


class JobNotFound(NotFound):
    """No job with that name in (tenant, stack)."""

    code = error_code("X404903JOBNFD", "job unknown in this tenant and stack")


class QueueItemNotFound(NotFound):
    """No queue item with that id in the tenant."""

    code = error_code("X404904ITMNFD", "queue item not found")


class TokenNotFound(NotFound):
    """No API token with that id."""

    code = error_code("X404905TOKNFD", "API token not found")


class TenantNotFound(NotFound):
    """A tenant the credentials do not cover: answered as absent, whether it exists or not."""

    code = error_code("X404906TENNFD", "tenant not found (or not visible to these credentials)")


class RouteNotFound(NotFound):
    """No API route at that path."""

    code = error_code("X404001NOROUT", "no API route at this path")


class AlertRuleNotFound(NotFound):
    """No alert rule with that name in the tenant."""

    code = error_code("X404311ALRNFD", "alert rule not found")


class AlertNotFound(NotFound):
    """No alert with that id in the tenant."""

    code = error_code("X404313ALTNFD", "alert not found")


class ChannelNotFound(NotFound):
    """No alert channel with that name in the tenant."""

    code = error_code("X404315CHNNFD", "alert channel not found")


class CalendarNotFound(NotFound):
    """No business calendar with that name in the tenant."""

    code = error_code("X404360CALNFD", "business calendar not found")


class VersionNotFound(NotFound):
    """The row has no version with that number (never made, or pruned; issue 38)."""

    code = error_code("X404380VERNFD", "schedule version not found (never made, or pruned)")


class JobVersionNotFound(NotFound):
    """The job has no version with that number (never made, or pruned; issue 38)."""

    code = error_code("X404384JVRNFD", "job version not found (never made, or pruned)")


class NothingToRestore(NotFound):
    """No row of that name was deleted within the version retention (issue 38)."""

    code = error_code(
        "X404381RSTNON",
        "nothing to restore: no schedule of that name was deleted within the version retention",
    )


class ShardNotFound(NotFound):
    """No shard of that name in the control database's shard list."""

    code = error_code("X404420SHDNFD", "shard not found")
