"""Actions by selector (issue 37): pause, resume, enable, disable or run every row a label
selector and/or a search names, over the whole selection (not a page).

`Selections.act` steps:

1. the query is checked and must name rows by a selector or a search (an empty
   one would act on every row of the scope: refused, InvalidRequest);
2. the whole selection is read in listing order (store.schedules.list_all);
3. more than core.selections.MAX_UNCONFIRMED rows need `confirm` unless it is a
   dry run (InvalidRequest, field `confirm`; nothing changes);
4. each row already in the action's state is `already`; in a dry run every
   other row is `changed` (would change) and nothing is written;
5. otherwise each row is one call of the single-row use case (pause_schedule,
   enable_schedule, run_now, ...) in its own transaction, checked against the
   revision the selection read (a row changed since is refused, StaleRevision),
   its change event carrying `{"selector", "search"}` (service.base.ACTING_ON);
   a coded refusal of one row (a conflict, a quota, a forbidden target, a stale
   revision) lists it as `refused` with its code, and the rest proceed.

The caller's role is checked once by the edge (the route's rule, the CLI's
local access), as for one row; what may still refuse is the row itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cronplane.core.controls import Missed
from cronplane.core.model import Schedule
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selections import (
    ACTIONS,
    SelectedRow,
    SelectionAction,
    SelectionReport,
    already,
    check_confirmed,
)
from cronplane.errors import CronplaneError, InternalError, InvalidRequest, Unavailable
from cronplane.service.base import ACTING_ON, Context, ServiceBase
from cronplane.service.controls import Controls
from cronplane.service.runs import RunService
from cronplane.service.schedules import Schedules
from cronplane.store import schedules as schedule_store


class Selections(ServiceBase):
    """Actions over a selection, through the single-row use cases."""

    def __init__(
        self, context: Context, schedules: Schedules, controls: Controls, runs: RunService
    ) -> None:
        super().__init__(context)
        self.schedules = schedules
        self.controls = controls
        self.runs = runs

    def act(
        self,
        tenant: str,
        action: SelectionAction,
        query: ScheduleQuery,
        *,
        actor: str,
        dry_run: bool = False,
        confirm: bool = False,
        until: str | None = None,
        note: str | None = None,
        missed: Missed | None = None,
    ) -> SelectionReport:
        """Do `action` to every row `query` names (its selector, search, stack,
        environment and other filters); see the module docstring for the steps."""
        if action not in ACTIONS:
            raise InvalidRequest(
                f"action {action!r} is unknown: use one of {', '.join(ACTIONS)}",
                {"field": "action"},
            )
        query = query.checked()
        if query.selector is None and query.search is None:
            raise InvalidRequest(
                "name the rows by a selector or a search (an empty one would be every row)",
                {"field": "selector"},
            )
        with self.database.read() as conn:
            selection = schedule_store.list_all(conn, tenant, query)
        check_confirmed(len(selection), confirm=confirm, dry_run=dry_run)
        one = self._one(action, actor=actor, until=until, note=note, missed=missed)
        acting = {"selector": query.selector, "search": query.search}
        rows = []
        for row in selection:
            if already(action, row):
                rows.append(_row(row, "already"))
            elif dry_run:
                rows.append(_row(row, "changed"))
            else:
                rows.append(_attempt(one, row, acting))
        return SelectionReport(action, query.selector, query.search, dry_run, tuple(rows))

    def _one(
        self,
        action: SelectionAction,
        *,
        actor: str,
        until: str | None,
        note: str | None,
        missed: Missed | None,
    ) -> Callable[[Schedule], str | None]:
        """The single-row use case of `action`, at the row's read revision; a run
        answers its item's id."""

        def call(row: Schedule) -> str | None:
            scope, name, revision = row.scope, row.name, row.revision
            if action == "pause":
                self.controls.pause_schedule(
                    scope,
                    name,
                    actor=actor,
                    until=until,
                    note=note,
                    revision=revision,
                    missed=missed,
                )
            elif action == "resume":
                self.controls.resume_schedule(
                    scope, name, actor=actor, revision=revision, missed=missed or "skip"
                )
            elif action == "enable":
                self.schedules.enable_schedule(scope, name, actor=actor, revision=revision)
            elif action == "disable":
                self.schedules.disable_schedule(scope, name, actor=actor, revision=revision)
            else:
                # A run changes no definition: it has no revision to check.
                return str(self.runs.run_now(scope, name, actor=actor).id)
            return None

        return call


def _row(row: Schedule, outcome: Any, **why: str | None) -> SelectedRow:
    return SelectedRow(row.stack, row.environment, row.name, outcome, **why)


def _attempt(
    one: Callable[[Schedule], str | None], row: Schedule, acting: dict[str, Any]
) -> SelectedRow:
    """One row's change, its events naming the selection; a coded refusal is its outcome."""
    token = ACTING_ON.set(acting)
    try:
        item_id = one(row)
    except (Unavailable, InternalError):
        raise  # not this row's answer: the whole action stops
    except CronplaneError as refused:
        return _row(row, "refused", code=refused.code.text, message=refused.message)
    finally:
        ACTING_ON.reset(token)
    return _row(row, "changed", item_id=item_id)
