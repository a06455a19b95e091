"""`client.schedules`: create, read, list (every page), edit, control and run schedules.

Each method is one request through the client's `RemoteService` (client.remote);
a schedule is named by its name in the client's stack and environment
(`Client.scoped` for others).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Final

from cronplane.client.remote import RemoteService
from cronplane.core.controls import Missed
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Page, QueueItem, Schedule, Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selections import SelectionAction, SelectionReport
from cronplane.core.versions import Version
from cronplane.events import Event
from cronplane.service import BackfillReport, Rollback, VersionDiff

# The server records the token's name as the actor; the port's argument is unused remotely.
ACTOR: Final = "client"
PAGE_SIZE: Final = 100


def instant(value: datetime | str) -> str:
    """An instant as the API reads it: ISO 8601 (an aware datetime keeps its offset)."""
    return value.isoformat() if isinstance(value, datetime) else value


class Schedules:
    """The schedules of one tenant, stack and environment (`client.schedules`)."""

    def __init__(self, service: RemoteService, scope: Scope) -> None:
        self._service = service
        self._scope = scope

    def create(self, job: str, cron: str, *, name: str | None = None, **fields: Any) -> Schedule:
        """Create a schedule of `job` on `cron` (named after the job unless `name` is given).

        `fields` are any of `ScheduleSpec`'s (core.inputs: the field table's rows,
        e.g. timezone, payload, overlap, timeout, start_at, dst_repeat): a field
        added to the product is here without a change to this method, and an
        unknown one is a TypeError naming it. `payload` None uses the job's default payload.
        Raises ScheduleExists, JobNotFound, CronRejected, … as the server decides.
        """
        spec = ScheduleSpec(job=job, cron=cron, name=name, **fields)
        return self._service.create_schedule(self._scope, spec, actor=ACTOR)

    def get(self, name: str) -> Schedule:
        """The schedule `name` (ScheduleNotFound when there is none)."""
        return self._service.get_schedule(self._scope, name)

    def list(
        self,
        *,
        all_stacks: bool = False,
        source: str | None = None,
        enabled: bool | None = None,
        job: str | None = None,
        search: str | None = None,
        selector: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[Schedule]:
        """Every matching schedule, ordered by (name, stack, environment), fetched a page
        at a time as the iteration goes on. The client's stack and environment only,
        unless `all_stacks` (then every schedule of the tenant). `selector` is a label
        selector (`team=payments,tier!=batch`), `search` free text."""
        query = ScheduleQuery(
            stack=None if all_stacks else self._scope.stack,
            environment=None if all_stacks else self._scope.environment,
            source=source,
            enabled=enabled,
            job=job,
            search=search,
            selector=selector,
            limit=page_size,
        )
        while True:
            page = self.page(query)
            yield from page.items
            if page.next_cursor is None:
                return
            query = ScheduleQuery(**{**query.params(), "cursor": page.next_cursor})

    def page(self, query: ScheduleQuery | None = None) -> Page:
        """One page of the tenant's schedules as `query` selects (its `next_cursor`
        goes into the next query's `cursor`; None on the last page)."""
        return self._service.list_schedules(self._scope.tenant, query)

    def update(self, name: str, *, revision: int | None = None, **fields: Any) -> Schedule:
        """Change the fields given (`SchedulePatch`'s: None clears a nullable one; an
        unknown one is a TypeError). With `revision`, only if the schedule is still at
        it (StaleRevision otherwise)."""
        patch = SchedulePatch(**fields)
        return self._service.update_schedule(
            self._scope, name, patch, actor=ACTOR, revision=revision
        )

    def remove(self, name: str, *, revision: int | None = None) -> Schedule:
        """Delete the schedule; returns it as it was."""
        return self._service.remove_schedule(self._scope, name, actor=ACTOR, revision=revision)

    # -- controls (docs/controls.md) --------------------------------------------------

    def enable(self, name: str, *, revision: int | None = None) -> Schedule:
        """Enable: next_run from now, no back-fill."""
        return self._service.enable_schedule(self._scope, name, actor=ACTOR, revision=revision)

    def disable(self, name: str, *, revision: int | None = None) -> Schedule:
        """Disable: no more fires until enabled."""
        return self._service.disable_schedule(self._scope, name, actor=ACTOR, revision=revision)

    def pause(
        self,
        name: str,
        *,
        until: datetime | str | None = None,
        note: str | None = None,
        revision: int | None = None,
        missed: Missed | None = None,
    ) -> Schedule:
        """Pause: each occurrence is skipped (and recorded) until resumed or `until`;
        `missed` (with `until` only) is what the pause passed becomes when it ends by
        itself, as for `resume`."""
        return self._service.pause_schedule(
            self._scope,
            name,
            actor=ACTOR,
            until=None if until is None else instant(until),
            note=note,
            revision=revision,
            missed=missed,
        )

    def resume(
        self, name: str, *, revision: int | None = None, missed: Missed = "skip"
    ) -> Schedule:
        """Resume a paused schedule: its next occurrence fires; what the pause passed is
        skipped, or (`missed`) its latest occurrence (`once`) or each one (`all`) is
        enqueued as a backfill."""
        return self._service.resume_schedule(
            self._scope, name, actor=ACTOR, revision=revision, missed=missed
        )

    def backfill(
        self,
        name: str,
        *,
        start: datetime | str,
        end: datetime | str,
        dry_run: bool = False,
        allow_overlap: bool = False,
    ) -> BackfillReport:
        """Enqueue the occurrences in [start, end) that never fired (dry_run: only say which)."""
        return self._service.backfill_schedule(
            self._scope,
            name,
            actor=ACTOR,
            start=instant(start),
            end=instant(end),
            dry_run=dry_run,
            allow_overlap=allow_overlap,
        )

    def reset(self, name: str, *, revision: int | None = None) -> Schedule:
        """Drop an app schedule's overrides: back to its manifest's declaration."""
        return self._service.reset_to_manifest(self._scope, name, actor=ACTOR, revision=revision)

    # -- runs ----------------------------------------------------------------------------

    def run(self, name: str, *, payload: dict[str, Any] | None = None) -> QueueItem:
        """Run now: enqueue the schedule's job at once (`payload` replaces the schedule's
        for this run); `client.runs.wait(item.id)` waits for its end."""
        return self._service.run_now(self._scope, name, actor=ACTOR, payload=payload)

    def history(
        self, name: str, *, limit: int = 50, before: int | None = None
    ) -> builtins.list[Event]:
        """The schedule's events, newest first (`before`: an event id, for the next page)."""
        return self._service.schedule_history(self._scope, name, limit=limit, before_id=before)

    # -- versions (issue 38) -------------------------------------------------------------

    def versions(
        self, name: str, *, limit: int = 100, before: int | None = None
    ) -> builtins.list[Version]:
        """The schedule's versions, newest first (`before`: a version number, for the next page)."""
        return self._service.list_versions(self._scope, name, limit=limit, before=before)

    def diff(self, name: str, first: int | None = None, second: int | None = None) -> VersionDiff:
        """Version `first` against `second` (default: the previous against the current)."""
        return self._service.diff_versions(self._scope, name, first, second)

    def rollback(
        self,
        name: str,
        *,
        to: int,
        dry_run: bool = False,
        reason: str | None = None,
        revision: int | None = None,
    ) -> Rollback:
        """Make the definition version `to`'s again (a new version; on an app row, drift)."""
        return self._service.rollback_schedule(
            self._scope, name, to=to, actor=ACTOR, revision=revision, dry_run=dry_run, reason=reason
        )

    def restore(self, name: str, *, reason: str | None = None) -> Schedule:
        """Bring back a schedule deleted within the version retention."""
        return self._service.restore_schedule(self._scope, name, actor=ACTOR, reason=reason)

    def act(
        self,
        action: SelectionAction,
        *,
        selector: str | None = None,
        search: str | None = None,
        all_stacks: bool = False,
        dry_run: bool = False,
        confirm: bool = False,
        until: datetime | str | None = None,
        note: str | None = None,
        missed: Missed | None = None,
    ) -> SelectionReport:
        """Pause, resume, enable, disable or run every schedule a selector (and/or search)
        names, each row one revision-checked change; the report says which changed,
        were refused (with their code) or were already so. `confirm` past 1,000 rows."""
        query = ScheduleQuery(
            stack=None if all_stacks else self._scope.stack,
            environment=None if all_stacks else self._scope.environment,
            selector=selector,
            search=search,
        )
        return self._service.act_on_selection(
            self._scope.tenant,
            action,
            query,
            actor=ACTOR,
            dry_run=dry_run,
            confirm=confirm,
            until=None if until is None else instant(until),
            note=note,
            missed=missed,
        )
