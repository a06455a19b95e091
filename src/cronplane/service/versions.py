"""Schedule versions (issue 38): list, diff, roll back, restore.

Versions are written by the store on every definition change (store.versions);
this part reads them and acts on them:

- a rollback to version V is an edit of the fields that differ from V's
  (core.versions.ROLLBACK_FIELDS), through the edit path
  (`Schedules.apply_fields`: validation, revision check, ledger event), so it
  cannot make a row an edit could not; on an app row it becomes an override
  (drift). Its version says `via: rollback`. A version whose job is gone or
  inactive is refused (VersionJobGone); a dry run reports the changes and
  writes nothing;
- a restore recreates a deleted row (same id, so its versions go on) from its
  last version, when that deletion is within the retention
  (CRONPLANE_VERSION_RETENTION); its next run is computed forward from now,
  and it must fit the tenant's quotas like a create (max_schedules, interval).
  An app row comes back as a `user` row: its manifest no longer declares it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from cronplane import events, settings
from cronplane.core import controls
from cronplane.core.cron import parse
from cronplane.core.model import Schedule, Scope
from cronplane.core.occurrences import row_next_run
from cronplane.core.queries import check_limit
from cronplane.core.versions import (
    DEFINITION_FIELDS,
    ROLLBACK_FIELDS,
    FieldChange,
    Version,
    compared,
    decoded,
    definition_of,
    diff,
)
from cronplane.errors import (
    NothingToRestore,
    RestoreNameTaken,
    VersionJobGone,
    VersionNotFound,
)
from cronplane.service.base import ServiceBase, changes_via, existing, schedule_event
from cronplane.service.calendars import resumed, row_exclusion
from cronplane.service.schedules import Schedules
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store import versions as version_store

RUNS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class VersionDiff:
    """Two versions of a row side by side: the fields that differ, each cron's
    description and the next runs (from now) each definition would have."""

    before: Version
    after: Version
    changes: tuple[FieldChange, ...]
    described: tuple[str, str]
    runs: tuple[tuple[datetime, ...], tuple[datetime, ...]]


@dataclass(frozen=True, slots=True)
class Rollback:
    """A rollback's outcome: the row (as it would be, on a dry run) and what changed."""

    schedule: Schedule
    to: int
    changes: tuple[FieldChange, ...]
    dry_run: bool


class Versions(ServiceBase):
    """Versions of schedules: reads, rollback and restore (the writes are the store's)."""

    def __init__(self, context: Any, schedules: Schedules) -> None:
        super().__init__(context)
        self.schedules = schedules

    def list_versions(
        self, scope: Scope, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[Version]:
        """The row's versions, newest first (below `before`, a version number, if given)."""
        check_limit(limit)
        with self._listing() as conn:
            row = existing(conn, scope, name)
            return version_store.list_versions(conn, row.id, limit=limit, before=before)

    def get_version(self, scope: Scope, name: str, number: int) -> Version:
        """One version of the row; VersionNotFound otherwise."""
        with self._listing() as conn:
            return _version(conn, existing(conn, scope, name), number)

    def diff_versions(
        self, scope: Scope, name: str, first: int | None = None, second: int | None = None
    ) -> VersionDiff:
        """Version `first` against `second` (default: the previous against the current)."""
        with self._listing() as conn:
            row = existing(conn, scope, name)
            latest = version_store.latest_numbers(conn, [row.id]).get(row.id)
            if latest is None:
                raise VersionNotFound(f"schedule {name!r} has no version", {"name": name})
            older, newer = compared(latest, first, second)
            after, before = _version(conn, row, newer), _version(conn, row, older)
            now = self.clock.now()
            runs = (_runs(conn, row, before, now), _runs(conn, row, after, now))
        return VersionDiff(
            before,
            after,
            tuple(diff(before.definition, after.definition)),
            (_described(before), _described(after)),
            runs,
        )

    def rollback(
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
        """Make the row's definition version `to`'s again (a new version, via rollback)."""
        with changes_via("rollback", reason), self._write() as tx:
            row = existing(tx.conn, scope, name, for_update=True)
            target = _version(tx.conn, row, to)
            given = _differing(row, target)
            _check_job(tx.conn, row, target)
            changes = tuple(diff(definition_of(row), target.definition))
            if dry_run:
                preview = replace(row, **given)
                return Rollback(preview, to, changes, True)
            updated = self.schedules.apply_fields(
                tx, row, given, actor, revision, events.SCHEDULE_ROLLED_BACK
            )
        return Rollback(updated, to, changes, False)

    def restore(
        self, scope: Scope, name: str, *, actor: str, reason: str | None = None
    ) -> Schedule:
        """Recreate a row deleted within the retention from its last version."""
        retention = timedelta(days=settings.version_retention_days())
        with changes_via("restore", reason), self._write() as tx:
            live = schedule_store.get_by_key(
                tx.conn, scope.tenant, scope.stack, scope.environment, name, for_update=True
            )
            if live is not None:
                raise RestoreNameTaken(
                    f"schedule {name!r} exists: nothing to restore", {"name": name}
                )
            last = version_store.last_of_name(
                tx.conn, scope.tenant, scope.stack, scope.environment, name
            )
            if last is None or not last.removed or last.at < tx.now - retention:
                raise NothingToRestore(
                    f"no schedule {name!r} was deleted in the last {retention.days} days",
                    {"name": name, "retention_days": retention.days},
                )
            row = _restored(last, tx.now)
            _check_job(tx.conn, row, last)
            self.schedules.check_new_row(tx, row.tenant, row.cron)
            exclusion = row_exclusion(
                tx.conn, row.tenant, row.exclude, row.on_excluded, row.timezone
            )
            row = replace(row, next_run=resumed(row, tx.now, exclusion))
            if not schedule_store.insert_schedules(tx.conn, [row], change=tx.change(actor)):
                # A concurrent create or restore took the name first (the key refused ours).
                raise RestoreNameTaken(
                    f"schedule {name!r} exists: nothing to restore", {"name": name}
                )
            schedule_event(
                tx, events.SCHEDULE_RESTORED, row, actor, "restored", {"version": last.number}
            )
            tx.schedules_changed()
        return row


def _version(conn: Connection, row: Schedule, number: int) -> Version:
    found = version_store.get_version(conn, row.id, number)
    if found is None:
        raise VersionNotFound(
            f"schedule {row.name!r} has no version {number}", {"name": row.name, "version": number}
        )
    return found


def _differing(row: Schedule, version: Version) -> dict[str, Any]:
    """The rollback fields whose value in `version` differs from the row's."""
    current = definition_of(row)
    wanted = {k: v for k, v in version.definition.items() if k in ROLLBACK_FIELDS}
    names = tuple(name for name, value in wanted.items() if current.get(name) != value)
    return decoded(version.definition, names)


def _check_job(conn: Connection, row: Schedule, version: Version) -> None:
    job_name = version.definition.get("job", row.job)
    job = job_store.get_job(conn, row.tenant, row.stack, job_name)
    if job is None or not job.active:
        raise VersionJobGone(
            f"version {version.number} of {row.name!r} runs job {job_name!r}, which "
            + ("no longer exists" if job is None else "is inactive"),
            {"name": row.name, "version": version.number, "job": job_name},
        )


def _restored(last: Version, now: datetime) -> Schedule:
    """The row a removed version stands for, recreated now (same id, no runs yet)."""
    values = decoded(last.definition, DEFINITION_FIELDS)
    values["overrides"] = ()
    values["source"] = "user" if values.get("source") == "app" else values.get("source", "user")
    return Schedule(
        id=last.schedule_id,
        tenant=last.tenant,
        stack=last.stack,
        environment=last.environment,
        name=last.name,
        last_run=None,
        next_run=None,
        created_at=now,
        updated_at=now,
        revision=1,
        declared=None,
        jitter_offset=controls.jitter_offset(last.schedule_id, values.get("jitter")),
        **values,
    )


def _described(version: Version) -> str:
    cron = str(version.definition.get("cron", ""))
    try:
        return parse(cron).describe()
    except ValueError:
        return cron


def _runs(conn: Connection, row: Schedule, version: Version, now: datetime) -> tuple[datetime, ...]:
    """The next runs from now the version's definition would have (on the row's count)."""
    shaped = replace(row, **decoded(version.definition))
    exclusion = row_exclusion(conn, row.tenant, shaped.exclude, shaped.on_excluded, shaped.timezone)
    found: list[datetime] = []
    after = now
    while len(found) < RUNS_SHOWN:
        following = row_next_run(shaped, after, exclusion)
        if following is None:
            break
        found.append(following)
        after = following
    return tuple(found)
