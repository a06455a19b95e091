"""Environments diffed and promoted (issue 38): `diff_environments` and `promote_environment`.

The comparison and its rules are core.promotion's (pure). A promote, in one
transaction:
1. lock each compared (stack, target environment) like a sync (syncs and promotes of
   the target are serialized) and read both sides' rows;
2. compare; with a token, refuse (PromoteConflict) when either side's rows moved
   since the diff that gave it; limit to `only` (a name no source row has is
   ScheduleNotFound, a conflicting one PromoteOwnership);
3. check what it writes: each row's job active in the stack (jobs belong to the
   stack, so both environments run the same ones: a promote never registers a job;
   an inactive or missing one is refused, the jobs named), the payload against the
   job's schema, the tenant's quotas (max_schedules, the interval);
4. write: create the missing rows (each a version and an event), then update the
   differing ones through the edit path's writer (`Schedules.write_changes`: the
   revision check, next run, version, event). A create that finds its name taken,
   or an update whose row moved since step 1, refuses the whole promote
   (PromoteConflict): the transaction rolls back, nothing lands.
Rows only in the target are left alone; `conflict` rows are reported, never written.
Every version it writes says `via: promote` and, in its reason, the source
environment. A dry run stops after step 3 and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection

from cronplane import events
from cronplane.core import controls, validation
from cronplane.core.model import Job, Schedule
from cronplane.core.promotion import (
    EnvironmentDiff,
    ScheduleDifference,
    compare,
    moved_sides,
    promoted_changes,
    selected,
    token_of,
)
from cronplane.errors import (
    JobInactive,
    JobNotFound,
    PromoteConflict,
    PromoteOwnership,
    ScheduleNotFound,
    StaleRevision,
)
from cronplane.ids import time_ordered_id
from cronplane.service import quotas
from cronplane.service.base import (
    ACTING_ON,
    ServiceBase,
    Transaction,
    change_event,
    changes_via,
)
from cronplane.service.calendars import resumed, row_exclusion
from cronplane.service.schedules import Schedules
from cronplane.store import environments as environment_store
from cronplane.store import jobs as job_store
from cronplane.store import schedules as schedule_store
from cronplane.store.events import append_events

REASON_LIMIT = 500


@dataclass(frozen=True, slots=True)
class PromoteReport:
    """What a promote did (or, on a dry run, would do): the schedules it created and
    updated (each with its field differences), those already the same, the conflicts
    it left, and the rows only in the target (left alone). `token` is the diff's
    token of what it read, before writing."""

    tenant: str
    from_env: str
    to_env: str
    stack: str | None
    dry_run: bool
    token: str
    created: tuple[ScheduleDifference, ...] = ()
    updated: tuple[ScheduleDifference, ...] = ()
    unchanged: tuple[str, ...] = ()
    conflicts: tuple[ScheduleDifference, ...] = ()
    left: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        """True when it changes (or would change) any row."""
        return bool(self.created or self.updated)

    def summary(self) -> dict[str, int]:
        """How many of each."""
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "conflicts": len(self.conflicts),
            "left": len(self.left),
        }


@dataclass(frozen=True, slots=True)
class _Read:
    """Both sides as read in one transaction, and their comparison."""

    diff: EnvironmentDiff
    sources: dict[tuple[str, str], Schedule]
    targets: dict[tuple[str, str], Schedule]


class Promotion(ServiceBase):
    """Diff two environments of a tenant; promote the source's definitions to the target."""

    def __init__(self, context: Any, schedules: Schedules) -> None:
        super().__init__(context)
        self.schedules = schedules

    def diff_environments(
        self, tenant: str, from_env: str, to_env: str, *, stack: str | None = None
    ) -> EnvironmentDiff:
        """Every schedule of the stack (of every stack: `stack` None) in either environment,
        with its status and field differences, and the token a promote may carry."""
        _check_environments(tenant, from_env, to_env, stack)
        with self._read() as conn:
            return _read(conn, tenant, from_env, to_env, stack).diff

    def promote_environment(
        self,
        tenant: str,
        from_env: str,
        to_env: str,
        *,
        actor: str,
        stack: str | None = None,
        only: Sequence[str] | None = None,
        token: str | None = None,
        dry_run: bool = False,
        reason: str | None = None,
    ) -> PromoteReport:
        """Apply the source's effective definitions to the target, all or nothing (the
        module's docstring); with `token`, only if neither side moved since that diff."""
        _check_environments(tenant, from_env, to_env, stack)
        why = f"promoted from {from_env}" + (f": {reason}" if reason else "")
        if dry_run:
            with self._read() as conn:
                read = _read(conn, tenant, from_env, to_env, stack)
                return self._plan(conn, read, only, token, dry_run=True)
        with changes_via("promote", why[:REASON_LIMIT]), self._write() as tx:
            for name in _stacks(tx.conn, tenant, from_env, to_env, stack):
                schedule_store.lock_scope(tx.conn, tenant, name, to_env)
            read = _read(tx.conn, tenant, from_env, to_env, stack)
            report = self._plan(tx.conn, read, only, token, dry_run=False)
            if report.writes:
                # Each row's event names the source (service.base.with_selection).
                acting = ACTING_ON.set({"from": from_env})
                try:
                    self._create(tx, read, report.created, actor)
                    self._update(tx, read, report.updated, actor)
                finally:
                    ACTING_ON.reset(acting)
                tx.schedules_changed()
        return report

    # -- steps ---------------------------------------------------------------

    def _plan(
        self,
        conn: Connection,
        read: _Read,
        only: Sequence[str] | None,
        token: str | None,
        *,
        dry_run: bool,
    ) -> PromoteReport:
        """Steps 2 and 3: the report of what the promote writes, once every check passed."""
        diff = read.diff
        if token is not None and token != diff.token:
            sides = moved_sides(token, diff.token)
            raise PromoteConflict(
                f"the {' and '.join(sides)} rows changed since the diff was taken (or the "
                f"token is another comparison's, {diff.from_env} -> {diff.to_env}): "
                "nothing written, take the diff again",
                {"sides": sides, "token": token, "current": diff.token},
            )
        picked, unknown = selected(diff.schedules, only)
        if unknown:
            raise ScheduleNotFound(
                f"no schedule {', '.join(unknown)} in {diff.tenant}/{diff.from_env}",
                {"names": unknown, "environment": diff.from_env},
            )
        conflicts = [s for s in picked if s.status == "conflict"]
        if only is not None and conflicts:
            raise PromoteOwnership(
                f"{', '.join(s.key for s in conflicts)}: owned differently in "
                f"{diff.from_env} and {diff.to_env}; nothing written",
                {"names": [s.key for s in conflicts]},
            )
        report = PromoteReport(
            diff.tenant,
            diff.from_env,
            diff.to_env,
            diff.stack,
            dry_run,
            diff.token,
            created=tuple(s for s in picked if s.status == "only_in_source"),
            updated=tuple(s for s in picked if s.status == "differs"),
            unchanged=tuple(s.key for s in picked if s.status == "same"),
            conflicts=tuple(conflicts),
            left=tuple(s.key for s in picked if s.status == "only_in_target"),
        )
        # As an edit does: the job is judged where a row gets it or its payload anew.
        judged = [*report.created]
        judged += [s for s in report.updated if {f.field for f in s.fields} & {"job", "payload"}]
        rows = [read.sources[(s.stack, s.name)] for s in judged]
        jobs = _checked_jobs(conn, diff.tenant, rows)
        for row in rows:
            validation.validate_against_schema(
                row.payload, jobs[(row.stack, row.job)].payload_schema
            )
        quota = quotas.tenant_quota(conn, self.context.quotas, diff.tenant)
        if report.created:
            quotas.room_for_schedules(conn, diff.tenant, quota, len(report.created))
        crons = [*report.created]
        crons += [s for s in report.updated if any(f.field == "cron" for f in s.fields)]
        for item in crons:
            cron = read.sources[(item.stack, item.name)].cron
            quotas.check_interval(cron, quota, self.context.min_interval, diff.tenant)
        return report

    def _create(
        self,
        tx: Transaction,
        read: _Read,
        created: Iterable[ScheduleDifference],
        actor: str,
    ) -> None:
        """Insert each missing row as the source has it (runs and pause its own, next run
        forward from now: no back-fill); a name taken meanwhile refuses the promote."""
        rows = []
        for item in created:
            source = read.sources[(item.stack, item.name)]
            schedule_id = time_ordered_id(tx.now)
            row = replace(
                source,
                id=schedule_id,
                environment=read.diff.to_env,
                last_run=tx.now,
                next_run=None,
                created_at=tx.now,
                updated_at=tx.now,
                revision=1,
                run_count=0,
                jitter_offset=controls.jitter_offset(schedule_id, source.jitter),
                paused_at=None,
                paused_until=None,
                paused_note=None,
                paused_by=None,
                paused_missed=None,
            )
            exclusion = row_exclusion(
                tx.conn, row.tenant, row.exclude, row.on_excluded, row.timezone
            )
            rows.append(replace(row, next_run=resumed(row, tx.now, exclusion)))
        inserted = schedule_store.insert_schedules(tx.conn, rows, change=tx.change(actor))
        taken = [row for row in rows if row.id not in inserted]
        if taken:
            raise PromoteConflict(
                f"{', '.join(f'{r.stack}/{r.name}' for r in taken)} was created in "
                f"{read.diff.to_env} during the promote: nothing written",
                {"names": [f"{r.stack}/{r.name}" for r in taken]},
            )
        verb = f"created (promoted from {read.diff.from_env})"
        append_events(
            tx.conn, [change_event(tx, events.SCHEDULE_CREATED, row, actor, verb) for row in rows]
        )

    def _update(
        self, tx: Transaction, read: _Read, updated: Iterable[ScheduleDifference], actor: str
    ) -> None:
        """Set each differing row's fields to the source's, revision-checked against the
        row as read; a row that moved refuses the promote."""
        for item in updated:
            key = (item.stack, item.name)
            source, target = read.sources[key], read.targets[key]
            changes = promoted_changes(source, target)
            try:
                self.schedules.write_changes(
                    tx,
                    target,
                    changes,
                    actor,
                    events.SCHEDULE_PROMOTED,
                    f"promoted from {read.diff.from_env}",
                )
            except StaleRevision:
                raise PromoteConflict(
                    f"{item.key} changed in {read.diff.to_env} during the promote: "
                    "nothing written, take the diff again",
                    {"names": [item.key]},
                ) from None


def _check_environments(tenant: str, from_env: str, to_env: str, stack: str | None) -> None:
    """Each name checked (InvalidName). One environment named twice is no error: every
    schedule is `same`, and a promote writes nothing."""
    for value, what in ((tenant, "tenant"), (from_env, "environment"), (to_env, "environment")):
        validation.validate_name(value, what)
    if stack is not None:
        validation.validate_name(stack, "stack")


def _stacks(
    conn: Connection, tenant: str, from_env: str, to_env: str, stack: str | None
) -> list[str]:
    if stack is not None:
        return [stack]
    return environment_store.stacks_of(conn, tenant, (from_env, to_env))


def _read(conn: Connection, tenant: str, from_env: str, to_env: str, stack: str | None) -> _Read:
    """Both sides' rows of the compared stacks, and their comparison with its token."""
    sources: dict[tuple[str, str], Schedule] = {}
    targets: dict[tuple[str, str], Schedule] = {}
    for name in _stacks(conn, tenant, from_env, to_env, stack):
        for side, environment in ((sources, from_env), (targets, to_env)):
            side.update(
                ((row.stack, row.name), row)
                for row in schedule_store.in_scope(conn, tenant, name, environment)
            )
    token = token_of(tenant, from_env, to_env, stack, sources.values(), targets.values())
    diff = EnvironmentDiff(
        tenant, from_env, to_env, stack, token, compare(sources.values(), targets.values())
    )
    return _Read(diff, sources, targets)


def _checked_jobs(
    conn: Connection, tenant: str, rows: Iterable[Schedule]
) -> dict[tuple[str, str], Job]:
    """The jobs the written rows run, by (stack, name): JobNotFound or JobInactive naming
    every one that is missing or inactive (nothing is written then)."""
    found: dict[tuple[str, str], Job] = {}
    missing: list[str] = []
    inactive: list[str] = []
    for key in sorted({(row.stack, row.job) for row in rows}):
        job = job_store.get_job(conn, tenant, *key)
        if job is None:
            missing.append("/".join(key))
        elif not job.active:
            inactive.append("/".join(key))
        else:
            found[key] = job
    if missing:
        raise JobNotFound(
            f"job {', '.join(missing)} not found in {tenant}: register it first",
            {"jobs": missing},
        )
    if inactive:
        raise JobInactive(
            f"job {', '.join(inactive)} is inactive: activate it first", {"jobs": inactive}
        )
    return found
