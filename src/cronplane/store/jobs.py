"""The jobs table: row mapping and the statements the service runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Row, select, tuple_, update

from cronplane.core.model import Job
from cronplane.store import dialects
from cronplane.store.tables import jobs


def job_from_row(row: Row[Any]) -> Job:
    """Map a row of `jobs` to the frozen Job."""
    m = row._mapping
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


def insert_job(conn: Connection, job: Job) -> bool:
    """Insert one; False when (tenant, stack, name) already exists."""
    query = (
        dialects.of(conn)
        .insert(jobs)
        .on_conflict_do_nothing(index_elements=["tenant", "stack", "name"])
        .returning(jobs.c.id)
    )
    return conn.execute(query, job_values(job)).first() is not None


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
    job_id: UUID,
    values: Mapping[str, Any],
    *,
    expected_revision: int | None = None,
) -> bool:
    """Set `values` on one job; False when it is gone or its revision moved on."""
    query = update(jobs).where(jobs.c.id == job_id).values(**values)
    if expected_revision is not None:
        query = query.where(jobs.c.revision == expected_revision)
    return conn.execute(query).rowcount == 1
