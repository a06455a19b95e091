"""What the current state refuses (409, CLI exit 4)."""

from __future__ import annotations

from cronplane.errors.base import Conflict, InvalidState, error_code


class ScheduleExists(Conflict):
    """A schedule with the same (tenant, stack, environment, name) exists."""

    code = error_code("X409900SCHDPL", "schedule already exists (unique key)")


class AppOwned(Conflict):
    """An `app` row cannot be removed by hand."""

    code = error_code(
        "X409902APPOWN", "app-owned schedule: remove it from the manifest, or disable it"
    )


class JobExists(Conflict):
    """A job with that name exists in (tenant, stack)."""

    code = error_code("X409903JOBDPL", "job already exists")


class JobInactive(Conflict):
    """The job exists but is inactive."""

    code = error_code("X409904JOBINA", "job inactive")


class BackfillOverlap(Conflict):
    """A non-overlapping backfill asked while the schedule has an item queued or running."""

    code = error_code(
        "X409105BKFACT", "backfill refused: the schedule has an item queued or running (overlap)"
    )


class ItemFinished(InvalidState):
    """A queue item that already finished cannot be cancelled (nothing changes)."""

    code = error_code("X409200ITMFIN", "queue item already finished: nothing to cancel")


class AlertRuleExists(Conflict):
    """An alert rule with that name exists in the tenant."""

    code = error_code("X409312ALRDPL", "alert rule already exists")


class ChannelExists(Conflict):
    """An alert channel with that name exists in the tenant."""

    code = error_code("X409316CHNDPL", "alert channel already exists")


class VersionJobGone(Conflict):
    """A rollback or restore to a version whose job no longer exists or is inactive
    (issue 38); nothing changes."""

    code = error_code(
        "X409380VERJOB",
        "rollback refused: the job the version names no longer exists or is inactive",
    )


class RestoreNameTaken(Conflict):
    """A restore of a name that a live row holds (issue 38); nothing changes."""

    code = error_code("X409381RSTDPL", "restore refused: a schedule with this name exists")


class PromoteConflict(Conflict):
    """A promote whose rows moved: a target (or source) row changed since the diff whose
    token it carries, or during the promote itself (issue 38); nothing is written."""

    code = error_code(
        "X409382PRMCHG",
        "promote refused: a schedule changed since the diff was taken (or during the "
        "promote); nothing written, take the diff again",
    )


class PromoteOwnership(Conflict):
    """A promote limited (`only`) to a schedule owned differently in the two environments
    (an app row facing a user row, or a system row); nothing is written."""

    code = error_code(
        "X409383PRMOWN",
        "promote refused: the schedule is owned differently in the two environments "
        "(app vs user, or system)",
    )


class TenantMoving(Conflict):
    """The tenant is being moved between shards: its rows change only once it has landed."""

    code = error_code("X409420SHDMOV", "tenant moving between shards: retry once the move ends")


class ShardDraining(Conflict):
    """A move onto a shard that is draining (it takes no tenant), or a shard still holding some."""

    code = error_code("X409421SHDDRN", "shard draining, or still holding tenants")
