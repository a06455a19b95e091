"""Job versions (issue 38): list, diff, roll back.

Versions are written by the store on every change of a job's definition
(store.job_versions: register, update, deactivate, an app install's jobs,
housekeeping's own); this part reads them and acts on them. A rollback to
version V is an edit of the fields that differ from V's
(core.job_versions.JOB_ROLLBACK_FIELDS, the status included: a deactivation
is rolled back like any field) through the edit path (`update_job_in`:
validation, the `command:` rule, the revision check, a ledger event
`V200384JOBRBK`), so it cannot make a job an edit could not; its version
says `via: rollback`. On an app job it holds until the next install of the
app's manifest sets the manifest's definition again. A dry run reports the
changes and writes nothing. What these methods answer is read through
`core.job_versions.shown` (a target's URL credentials masked).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import Connection

from cronplane import events
from cronplane.core.access import Principal
from cronplane.core.inputs import JobPatch
from cronplane.core.job_versions import (
    JobVersion,
    job_definition_of,
    job_diff,
    rollback_values,
    shown,
    shown_changes,
)
from cronplane.core.model import Job
from cronplane.core.queries import check_limit
from cronplane.core.versions import FieldChange, compared
from cronplane.errors import JobVersionNotFound
from cronplane.service.base import ServiceBase, changes_via
from cronplane.service.jobs import existing_job, update_job_in
from cronplane.store import job_versions as version_store


@dataclass(frozen=True, slots=True)
class JobVersionDiff:
    """Two versions of a job side by side: the fields that differ."""

    before: JobVersion
    after: JobVersion
    changes: tuple[FieldChange, ...]


@dataclass(frozen=True, slots=True)
class JobRollback:
    """A job rollback's outcome: the job (as it would be, on a dry run) and what changed."""

    job: Job
    to: int
    changes: tuple[FieldChange, ...]
    dry_run: bool


class JobVersions(ServiceBase):
    """Versions of jobs: reads and rollback (the writes are the store's)."""

    def list_job_versions(
        self, tenant: str, stack: str, name: str, *, limit: int = 100, before: int | None = None
    ) -> list[JobVersion]:
        """The job's versions, newest first (below `before`, a version number, if given)."""
        check_limit(limit)
        with self._listing() as conn:
            job = existing_job(conn, tenant, stack, name)
            found = version_store.list_versions(conn, job.id, limit=limit, before=before)
        return [shown(version) for version in found]

    def get_job_version(self, tenant: str, stack: str, name: str, number: int) -> JobVersion:
        """One version of the job; JobVersionNotFound otherwise."""
        with self._listing() as conn:
            return shown(_version(conn, existing_job(conn, tenant, stack, name), number))

    def diff_job_versions(
        self,
        tenant: str,
        stack: str,
        name: str,
        first: int | None = None,
        second: int | None = None,
    ) -> JobVersionDiff:
        """Version `first` against `second` (default: the previous against the current)."""
        with self._listing() as conn:
            job = existing_job(conn, tenant, stack, name)
            latest = version_store.latest_number(conn, job.id)
            if latest is None:
                raise JobVersionNotFound(f"job {name!r} has no version", {"job": name})
            older, newer = compared(latest, first, second)
            after, before = _version(conn, job, newer), _version(conn, job, older)
        changes = shown_changes(job_diff(before.definition, after.definition))
        return JobVersionDiff(shown(before), shown(after), changes)

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
        principal: Principal | None = None,
    ) -> JobRollback:
        """Make the job's definition version `to`'s again (a new version, via rollback)."""
        caller = self.context.caller(principal)
        with changes_via("rollback", reason), self._write() as tx:
            job = existing_job(tx.conn, tenant, stack, name, for_update=True)
            target = _version(tx.conn, job, to)
            given = rollback_values(job, target)
            changes = shown_changes(job_diff(job_definition_of(job), target.definition))
            if dry_run:
                return JobRollback(replace(job, **given), to, changes, True)
            updated = update_job_in(
                tx,
                job,
                JobPatch(**given),
                actor=actor,
                caller=caller,
                revision=revision,
                code=events.JOB_ROLLED_BACK,
                detail={"to": to},
            )
        return JobRollback(updated, to, changes, False)


def _version(conn: Connection, job: Job, number: int) -> JobVersion:
    found = version_store.get_version(conn, job.id, number)
    if found is None:
        raise JobVersionNotFound(
            f"job {job.name!r} has no version {number}", {"job": job.name, "version": number}
        )
    return found
