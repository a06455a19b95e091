"""The jobs table: row mapping and the statements the service runs.

Every write of a job's definition takes the `Change` that makes it and writes
the job's version in the same transaction (store.job_versions): an insert
that inserted, an update that moved the revision on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, Row, select, tuple_, update

from cronplane.core.model import Job
from cronplane.core.versions import Change
from cronplane.store import dialects
from cronplane.store import job_versions as versions
from cronplane.store.tables import jobs


def job_from_row(row: Row[Any]) -> Job:
    """Map a row of `jobs` to the frozen Job."""
    return job_from_mapping(row._mapping)


def job_from_mapping(m: Mapping[Any, Any]) -> Job:
    """A `jobs` row's columns, by name, as the frozen Job."""
    return Job(
        id=m["id"],
        tenant=m["tenant"],
        stack=m["stack"],
        name=m["name"],
        title=m["title"],
        kind=m["kind"],
        status=m["status"],
        payload=dict(m["payload"] or {}),
        payload_schema=None if m["payload_schema"] is None else dict(m["payload_schema"]),
        target=m["target"],
        options=dict(m["options"] or {}),
        source=m["source"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        revision=m["revision"],
        labels=dict(m["labels"] or {}),
    )


def job_values(job: Job) -> dict[str, Any]:
    """The column values of a Job, for inserts."""
    return {
        "id": job.id,
        "tenant": job.tenant,
        "stack": job.stack,
        "name": job.name,
        "title": job.title,
        "kind": job.kind,
        "status": job.status,
        "payload": job.payload,
        "payload_schema": job.payload_schema,
        "target": job.target,
        "options": job.options,
        "source": job.source,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
        "revision": job.revision,
        "labels": job.labels,
    }


def insert_job(conn: Connection, job: Job, *, change: Change) -> bool:
    """Insert one, with its version 1; False (and no version) when (tenant, stack, name)
    already exists."""
    query = (
        dialects.of(conn)
        .insert(jobs)
        .on_conflict_do_nothing(index_elements=["tenant", "stack", "name"])
        .returning(jobs.c.id)
    )
    inserted = conn.execute(query, job_values(job)).first() is not None
    if inserted:
        versions.record(conn, job, change)
    return inserted


def get_job(
    conn: Connection, tenant: str, stack: str, name: str, *, for_update: bool = False
) -> Job | None:
    """The job with this key, or None."""
    query = select(jobs).where(jobs.c.tenant == tenant, jobs.c.stack == stack, jobs.c.name == name)
    if for_update:
        query = query.with_for_update()
    row = conn.execute(query).first()
    return None if row is None else job_from_row(row)


def jobs_by_key(
    conn: Connection, keys: Iterable[tuple[str, str, str]]
) -> dict[tuple[str, str, str], Job]:
    """The jobs with these (tenant, stack, name) keys, in one statement (a key with no job
    has none): a claim of items of a thousand jobs reads them once, not per job."""
    wanted = list(set(keys))
    if not wanted:
        return {}
    key = tuple_(jobs.c.tenant, jobs.c.stack, jobs.c.name)
    found = {}
    for row in conn.execute(select(jobs).where(key.in_(wanted))):
        job = job_from_row(row)
        found[(job.tenant, job.stack, job.name)] = job
    return found


def list_jobs(
    conn: Connection,
    tenant: str,
    stack: str | None = None,
    *,
    status: str | None = None,
    source: str | None = None,
) -> list[Job]:
    """Jobs of a tenant (optionally one stack, status or source), by stack and name."""
    query = select(jobs).where(jobs.c.tenant == tenant).order_by(jobs.c.stack, jobs.c.name)
    if stack is not None:
        query = query.where(jobs.c.stack == stack)
    if status is not None:
        query = query.where(jobs.c.status == status)
    if source is not None:
        query = query.where(jobs.c.source == source)
    return [job_from_row(row) for row in conn.execute(query)]


def update_job(
    conn: Connection,
    job: Job,
    values: Mapping[str, Any],
    *,
    change: Change,
    expected_revision: int | None = None,
) -> Job | None:
    """Set `values` on the job, with its new version; None when it is gone or its
    revision moved on (nothing written then)."""
    query = update(jobs).where(jobs.c.id == job.id).values(**values)
    if expected_revision is not None:
        query = query.where(jobs.c.revision == expected_revision)
    if conn.execute(query).rowcount != 1:
        return None
    updated = replace(job, **values)
    versions.record(conn, updated, change)
    return updated
