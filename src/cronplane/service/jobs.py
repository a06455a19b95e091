"""Job use cases (SPEC §4): register, get, list, update, deactivate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final
from uuid import uuid4

from sqlalchemy import Connection

from cronplane import events
from cronplane.codes import Code
from cronplane.core import target_rules, validation
from cronplane.core.access import Principal
from cronplane.core.choices import Source
from cronplane.core.codec import field_names, to_document
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.labels import validate_labels
from cronplane.core.model import Job
from cronplane.core.selectors import parse_selector
from cronplane.core.versions import Change, manifest_digest
from cronplane.errors import InvalidRequest, JobExists, JobNotFound, StaleRevision
from cronplane.service import quotas
from cronplane.service.base import Caller, ServiceBase, Transaction, json_value
from cronplane.store import jobs as job_store
from cronplane.store.events import append_event

PATCH_FIELDS = field_names(JobPatch)
# What a job change's event says was done, by its code.
VERBS: Final = {events.JOB_DEACTIVATED: "deactivated", events.JOB_ROLLED_BACK: "rolled back"}


def checked_job(spec: JobSpec) -> JobSpec:
    """The spec with every field checked and `kind` filled from the target's scheme."""
    validation.validate_name(spec.name, "job name")
    scheme = target_rules.validate_target(spec.target)
    validation.validate_title(spec.title)
    kind = spec.kind or scheme
    validation.validate_name(kind, "kind")
    payload = validation.validate_payload(spec.payload)
    schema = None
    if spec.payload_schema is not None:
        schema = validation.validate_schema(spec.payload_schema, "payload_schema")
        validation.validate_against_schema(payload, schema)
    validation.validate_payload(spec.options, "options")
    validation.validate_run_options(spec.options)
    if scheme == "webhook":
        validation.validate_secret_option(spec.options)
    if spec.status not in ("active", "inactive"):
        raise InvalidRequest(f"status {spec.status!r} is invalid: use active or inactive")
    return replace(spec, kind=kind, payload_schema=schema, labels=validate_labels(spec.labels))


def new_job(tenant: str, stack: str, spec: JobSpec, source: Source, tx: Transaction) -> Job:
    """A Job value for a checked spec, created now."""
    return Job(
        id=uuid4(),
        tenant=tenant,
        stack=stack,
        name=spec.name,
        title=spec.title,
        kind=spec.kind or "",
        status=spec.status,
        payload=spec.payload,
        payload_schema=spec.payload_schema,
        target=spec.target,
        options=spec.options,
        source=source,
        created_at=tx.now,
        updated_at=tx.now,
        revision=1,
        labels=spec.labels,
    )


def job_fields(job: Job | JobSpec) -> dict[str, Any]:
    """The fields a job patch may set, with the job's values."""
    return {name: getattr(job, name) for name in PATCH_FIELDS}


def job_changes(job: Job, values: dict[str, Any]) -> dict[str, Any]:
    """The subset of `values` that differs from the job."""
    return {key: value for key, value in values.items() if getattr(job, key) != value}


class Jobs(ServiceBase):
    """Jobs per (tenant, stack)."""

    def register_job(
        self,
        tenant: str,
        stack: str,
        spec: JobSpec,
        *,
        actor: str,
        source: Source = "user",
        principal: Principal | None = None,
    ) -> Job:
        """Register a job; JobExists when (tenant, stack, name) is taken. A `command:` job
        needs a platform admin `principal` (see `Context.local_admin` for None)."""
        validation.validate_name(tenant, "tenant")
        validation.validate_name(stack, "stack")
        spec = checked_job(spec)
        self.context.caller(principal).check_job(None, spec)
        with self._write() as tx:
            job = new_job(tenant, stack, spec, source, tx)
            quotas.room_for_jobs(
                tx.conn, tenant, quotas.tenant_quota(tx.conn, self.context.quotas, tenant), 1
            )
            if not job_store.insert_job(tx.conn, job, change=tx.change(actor)):
                raise JobExists(
                    f"job {spec.name!r} already exists in {tenant}/{stack}",
                    {"tenant": tenant, "stack": stack, "job": spec.name},
                )
            job_event(tx, events.JOB_REGISTERED, job, actor, f"job {job.name} registered")
        return job

    def get_job(self, tenant: str, stack: str, name: str) -> Job:
        """The job; JobNotFound otherwise."""
        with self._read() as conn:
            return existing_job(conn, tenant, stack, name)

    def list_jobs(
        self,
        tenant: str,
        stack: str | None = None,
        *,
        status: str | None = None,
        selector: str | None = None,
    ) -> list[Job]:
        """Jobs of a tenant (optionally one stack or status, or those whose labels a
        selector selects: core.selectors, as `schedule ls -l`), by stack and name."""
        chosen = parse_selector(selector) if selector is not None else None
        with self._listing() as conn:
            rows = job_store.list_jobs(conn, tenant, stack, status=status)
        # Jobs are few (a tenant's quota): judged here, not by an index.
        return rows if not chosen else [job for job in rows if chosen.matches(job.labels)]

    def update_job(
        self,
        tenant: str,
        stack: str,
        name: str,
        patch: JobPatch,
        *,
        actor: str,
        revision: int | None = None,
        principal: Principal | None = None,
    ) -> Job:
        """Change a job's fields; StaleRevision when `revision` is given and old."""
        caller = self.context.caller(principal)
        with self._write() as tx:
            job = existing_job(tx.conn, tenant, stack, name, for_update=True)
            return update_job_in(tx, job, patch, actor=actor, revision=revision, caller=caller)

    def deactivate_job(
        self,
        tenant: str,
        stack: str,
        name: str,
        *,
        actor: str,
        revision: int | None = None,
        principal: Principal | None = None,
    ) -> Job:
        """Mark a job inactive: new schedules are refused, fires record JOB_MISSING."""
        return self.update_job(
            tenant,
            stack,
            name,
            JobPatch(status="inactive"),
            actor=actor,
            revision=revision,
            principal=principal,
        )


def existing_job(
    conn: Connection, tenant: str, stack: str, name: str, *, for_update: bool = False
) -> Job:
    job = job_store.get_job(conn, tenant, stack, name, for_update=for_update)
    if job is None:
        raise JobNotFound(
            f"job {name!r} not found in {tenant}/{stack}",
            {"tenant": tenant, "stack": stack, "job": name},
        )
    return job


def update_job_in(
    tx: Transaction,
    job: Job,
    patch: JobPatch,
    *,
    actor: str,
    caller: Caller,
    revision: int | None = None,
    change: Change | None = None,
    code: Code | None = None,
    detail: Mapping[str, Any] | None = None,
) -> Job:
    """Apply a patch to a job inside `tx` (update_job, app install for its jobs, a
    rollback); `caller` judges a change to a `command:` job. Its version is stamped
    with `change` (default: the transaction's) and its event is `code` (default: updated
    or deactivated), its detail the fields changed and `detail`."""
    if revision is not None and revision != job.revision:
        raise StaleRevision(
            f"job {job.name!r} is at revision {job.revision}, not {revision}",
            {"current": job.revision, "given": revision},
        )
    given = patch.given()
    current = job_fields(job)
    if "target" in given:
        current["kind"] = None  # unless given, a new target's kind is its scheme
    merged = checked_job(JobSpec(name=job.name, **{**current, **given}))
    caller.check_job(job, merged)
    changes = job_changes(job, job_fields(merged))
    if not changes:
        return job
    values = {**changes, "updated_at": tx.now, "revision": job.revision + 1}
    updated = job_store.update_job(
        tx.conn,
        job,
        values,
        change=change or tx.change(actor),
        expected_revision=job.revision,
    )
    if updated is None:
        raise StaleRevision(f"job {job.name!r} changed concurrently; read it again")
    deactivated = changes.get("status") == "inactive"
    if code is None:
        code = events.JOB_DEACTIVATED if deactivated else events.JOB_UPDATED
    verb = VERBS.get(code, "updated")
    detail = {"fields": sorted(changes), **(detail or {})}
    job_event(tx, code, updated, actor, f"job {job.name} {verb}", detail)
    return updated


def app_jobs_change(tx: Transaction, actor: str, specs: Mapping[str, JobSpec]) -> Change:
    """How an app install changes its jobs: `via: sync`, with the digest of the jobs
    its manifest declares (their versions say which manifest made them)."""
    digest = manifest_digest({name: to_document(spec) for name, spec in specs.items()})
    return replace(tx.change(actor, digest=digest), via="sync")


def deactivate_app_jobs(
    tx: Transaction, tenant: str, stack: str, actor: str, caller: Caller
) -> list[str]:
    """Deactivate the stack's active app jobs (an uninstall that left no app row), each
    change `via: sync`; the names deactivated."""
    by = replace(tx.change(actor), via="sync")
    names = []
    for job in job_store.list_jobs(tx.conn, tenant, stack, status="active", source="app"):
        update_job_in(tx, job, JobPatch(status="inactive"), actor=actor, caller=caller, change=by)
        names.append(job.name)
    return names


def job_event(
    tx: Transaction,
    code: Any,
    job: Job,
    actor: str,
    message: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append the event of one job change, with its actor."""
    append_event(
        tx.conn,
        code,
        tenant=job.tenant,
        stack=job.stack,
        actor=actor,
        message=message,
        now=tx.now,
        detail={"job": job.name, "revision": json_value(job.revision), **(detail or {})},
    )
