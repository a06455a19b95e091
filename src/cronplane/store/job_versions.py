"""The job_versions table: writing a job's versions, reading and pruning them.

`record` is called by store.jobs on every write of a job's definition (its
insert, an update that moves the revision on), in the caller's transaction,
so no path can change a job without leaving a version. Numbering is
schedule versions' (store.versions): the job's highest plus one, read after
the job's own UPDATE, which holds its lock until commit (PostgreSQL; SQLite
has one writer); the primary key (job_id, number) refuses a duplicate.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Row, func, select

from cronplane.core.codec import field_names
from cronplane.core.job_versions import JobVersion, job_definition_of
from cronplane.core.model import Job
from cronplane.core.versions import KEEP_LAST, Change
from cronplane.store.tables import job_versions, jobs
from cronplane.store.versions import prune_versions, version_page, version_row

# In the order of JobVersion's fields, so a row maps by position (a listing maps thousands).
_COLUMNS = tuple(job_versions.c[name] for name in field_names(JobVersion))


def _version(row: Row[Any]) -> JobVersion:
    return JobVersion(*row)  # type: ignore[call-arg]  # the columns are its fields, in order


def latest_number(conn: Connection, job_id: UUID) -> int | None:
    """The job's highest version number (None when it has none)."""
    query = select(func.max(job_versions.c.number)).where(job_versions.c.job_id == job_id)
    found = conn.execute(query).scalar()
    return None if found is None else int(found)


def record(conn: Connection, job: Job, change: Change) -> None:
    """Write one version of the job as it now stands."""
    conn.execute(
        job_versions.insert(),
        {
            "job_id": job.id,
            "number": (latest_number(conn, job.id) or 0) + 1,
            "tenant": job.tenant,
            "stack": job.stack,
            "name": job.name,
            "definition": job_definition_of(job),
            "actor": change.actor,
            "via": change.via,
            "at": change.at,
            "reason": change.reason,
            "digest": change.digest,
            "app_version": change.app_version,
        },
    )


def list_versions(
    conn: Connection, job_id: UUID, *, limit: int = 100, before: int | None = None
) -> list[JobVersion]:
    """A job's versions, newest first, from below `before` (the primary key's range)."""
    found = version_page(conn, _COLUMNS, job_versions.c.job_id, job_id, limit, before)
    return [_version(row) for row in found]


def get_version(conn: Connection, job_id: UUID, number: int) -> JobVersion | None:
    """One version of a job, or None."""
    row = version_row(conn, _COLUMNS, job_versions.c.job_id, job_id, number)
    return None if row is None else _version(row)


def prune(conn: Connection, before: datetime, keep_last: int = KEEP_LAST) -> int:
    """Delete job versions made before `before`, except each job's last `keep_last`
    (store.versions.prune_versions' rule). Returns how many went."""
    return prune_versions(conn, job_versions, job_versions.c.job_id, jobs.c.id, before, keep_last)
