"""Creating schedules (SPEC §2): one create, or many in one transaction (group commit).

Everything that needs no database is checked before the transaction
(`_check_create`); inside it, the tenant's quotas (max_schedules, the
minimum interval), the job (active, in the scope's stack) and the payload's
schema; a refused request writes nothing and the others still commit.
`last_run` is the creation time and `next_run` the first occurrence strictly
after max(now, start_at), not after end_at: no back-fill.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from cronplane import events
from cronplane.core import controls, validation
from cronplane.core.choices import Source
from cronplane.core.dst import DstPolicy
from cronplane.core.edits import check_fields
from cronplane.core.inputs import Declared, ScheduleSpec, to_fields
from cronplane.core.model import Job, Schedule, Scope, new_schedule
from cronplane.core.occurrences import first_run
from cronplane.core.quotas import Quota
from cronplane.core.window import resolve_window
from cronplane.errors import CronplaneError, InvalidRequest, ScheduleExists, ScheduleQuotaExceeded
from cronplane.ids import time_ordered_id
from cronplane.service import quotas
from cronplane.service.base import ServiceBase, Transaction, active_job, change_event, checked_scope
from cronplane.service.calendars import row_exclusion
from cronplane.store import quotas as quota_store
from cronplane.store import schedules as schedule_store
from cronplane.store.events import append_events


@dataclass(frozen=True, slots=True)
class NewSchedule:
    """One create request: where, what, and who asks (see `create_schedules`)."""

    scope: Scope
    spec: ScheduleSpec
    actor: str
    source: Source = "user"


@dataclass(frozen=True, slots=True)
class _CheckedCreate:
    """A create request whose fields passed every check that needs no database."""

    request: NewSchedule
    name: str
    # The spec's fields, checked; `payload` None still means the job's default.
    values: dict[str, Any]


def _check_create(request: NewSchedule) -> _CheckedCreate:
    """Validate what needs no database; the coded error of the first bad field otherwise.
    The minimum interval is the tenant's (a quota may replace the platform's): judged in
    the transaction."""
    if request.source == "app":
        raise InvalidRequest("app schedules are created by sync, from the app's manifest")
    scope, spec = checked_scope(request.scope), request.spec
    name = validation.validate_name(spec.name or spec.job, "name")
    values = {
        key: value for key, value in to_fields(spec).items() if key not in ("name", "enabled")
    }
    given = {key: value for key, value in values.items() if value is not None}
    values.update(check_fields(given, scope.identity(name)))
    values.update(resolve_window(values, values["timezone"]))
    if values.get("cron") is not None:
        controls.check_jitter(values["cron"], values.get("jitter"))
    return _CheckedCreate(request, name, values)


def _new_row(
    tx: Transaction, item: _CheckedCreate, jobs: dict[tuple[str, str, str], Job | CronplaneError]
) -> Schedule:
    """The row a checked request creates (job looked up once per transaction, in `jobs`)."""
    scope, spec = item.request.scope, item.request.spec
    values = item.values
    exclusion = row_exclusion(
        tx.conn, scope.tenant, values["exclude"], values["on_excluded"], values["timezone"]
    )
    first = first_run(
        values["cron"],
        values["timezone"],
        tx.now,
        start_at=values["start_at"],
        end_at=values["end_at"],
        dst=DstPolicy(values["dst_gap"], values["dst_repeat"]),
        exclusion=exclusion,
    )
    key = (scope.tenant, scope.stack, spec.job)
    if key not in jobs:
        try:
            jobs[key] = active_job(tx.conn, scope, spec.job)
        except CronplaneError as error:
            jobs[key] = error
    job = jobs[key]
    if isinstance(job, CronplaneError):
        raise job
    payload = item.values["payload"]
    payload = dict(job.payload) if payload is None else payload
    validation.validate_against_schema(payload, job.payload_schema)
    schedule_id = time_ordered_id(tx.now)
    offset = controls.jitter_offset(schedule_id, item.values.get("jitter"))
    return new_schedule(
        scope,
        item.name,
        Declared(**{**item.values, "job": job.name, "payload": payload}),
        schedule_id=schedule_id,
        source=item.request.source,
        now=tx.now,
        next_run=controls.fire_at(first, offset) if spec.enabled else None,
        enabled=spec.enabled,
        jitter_offset=offset,
    )


@dataclass(slots=True)
class _TenantRoom:
    """One tenant's quota and schedule count within a group of creates."""

    tenant: str
    quota: Quota
    held: int

    def check(self) -> None:
        """ScheduleQuotaExceeded when one more create would pass max_schedules."""
        limit = self.quota.max_schedules
        if limit is not None and self.held + 1 > limit:
            raise ScheduleQuotaExceeded.of(
                self.tenant,
                "max_schedules",
                limit,
                f"1 more schedule would make {self.held + 1}",
                held=self.held,
                adding=1,
            )

    def take(self) -> None:
        self.held += 1


class ScheduleCreates(ServiceBase):
    """The create use cases of `Schedules`."""

    def create_schedule(
        self,
        scope: Scope,
        spec: ScheduleSpec,
        *,
        actor: str,
        source: Source = "user",
    ) -> Schedule:
        """Create a `user` (or `system`) schedule; `app` rows come only from sync.

        Raises InvalidName, CronRejected, UnknownZone, InvalidPayload,
        InvalidRequest, JobNotFound, JobInactive or ScheduleExists, and then
        writes nothing.
        """
        (result,) = self.create_schedules([NewSchedule(scope, spec, actor, source)])
        if isinstance(result, CronplaneError):
            raise result
        return result

    def create_schedules(self, requests: Sequence[NewSchedule]) -> list[Schedule | CronplaneError]:
        """Many single creates in one transaction (group commit), each judged on its own.

        The answer for each request is what `create_schedule` alone would
        answer — the new schedule or its coded error — in order; a later
        request for a key an earlier one took is ScheduleExists. A refused
        request writes nothing; the others still commit. An error of the
        transaction itself (database unavailable) is raised for all.
        """
        results: list[Schedule | CronplaneError | None] = [None] * len(requests)
        checked: list[tuple[int, _CheckedCreate]] = []
        for index, request in enumerate(requests):
            try:
                checked.append((index, _check_create(request)))
            except CronplaneError as error:
                results[index] = error
        if checked:
            with self._write() as tx:
                jobs: dict[tuple[str, str, str], Job | CronplaneError] = {}
                rows: list[tuple[int, _CheckedCreate, Schedule]] = []
                tenants: dict[str, _TenantRoom] = {}
                for index, item in checked:
                    try:
                        room = self._room(tx, tenants, item.request.scope.tenant)
                        if item.values.get("cron") is not None:
                            quotas.check_interval(
                                item.values["cron"],
                                room.quota,
                                self.context.min_interval,
                                room.tenant,
                            )
                        row = _new_row(tx, item, jobs)
                        room.take()
                        rows.append((index, item, row))
                    except CronplaneError as error:
                        results[index] = error
                # Each row's version names the actor of its request.
                actors: dict[str, list[Schedule]] = {}
                for _, item, row in rows:
                    actors.setdefault(item.request.actor, []).append(row)
                inserted: set[UUID] = set()
                for actor, group in actors.items():
                    inserted |= schedule_store.insert_schedules(
                        tx.conn, group, change=tx.change(actor)
                    )
                created: list[Mapping[str, Any]] = []
                for index, item, schedule in rows:
                    if schedule.id in inserted:
                        results[index] = schedule
                        created.append(
                            change_event(
                                tx, events.SCHEDULE_CREATED, schedule, item.request.actor, "created"
                            )
                        )
                    else:
                        results[index] = ScheduleExists(
                            f"schedule {schedule.name!r} already exists in "
                            f"{schedule.tenant}/{schedule.stack}/{schedule.environment}",
                            {"name": schedule.name},
                        )
                append_events(tx.conn, created)
                if created:
                    tx.schedules_changed()
        answers = [result for result in results if result is not None]
        if len(answers) != len(requests):  # an unanswered request would shift the others'
            raise RuntimeError("a create request was left without an answer")
        return answers

    # -- quotas ----------------------------------------------------------------

    def check_new_row(self, tx: Transaction, tenant: str, cron: str) -> None:
        """The quotas a row made other than by a create must fit too (a restore): the
        tenant's max_schedules and the shortest interval, in the caller's transaction."""
        room = self._room(tx, {}, tenant)
        quotas.check_interval(cron, room.quota, self.context.min_interval, tenant)

    def _room(self, tx: Transaction, tenants: dict[str, _TenantRoom], tenant: str) -> _TenantRoom:
        """The tenant's quota and free schedules in this transaction, read once per tenant."""
        room = tenants.get(tenant)
        if room is None:
            quota = quotas.tenant_quota(tx.conn, self.context.quotas, tenant)
            held = 0
            if quota.max_schedules is not None:
                quota_store.lock_tenant(tx.conn, tenant)
                held = quota_store.count_schedules(tx.conn, tenant, cap=quota.max_schedules + 1)
            room = tenants[tenant] = _TenantRoom(tenant, quota, held)
        room.check()
        return room
