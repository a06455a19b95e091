"""Actions by selector (issue 37): what each does, when a row is already there, and the
report. Pure; service.selections runs them.

    ACTIONS                      pause, resume, enable, disable, run
    already(action, schedule)    the row is in the state the action makes (nothing to do)
    SelectionReport              counts changed / refused / already, and every row

A selection of more than MAX_UNCONFIRMED rows is refused unless confirmed
(`--yes`, `"confirm": true`); a dry run lists the rows and needs no confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from cronplane.core.access import Action
from cronplane.core.model import Schedule
from cronplane.errors import InvalidRequest

SelectionAction = Literal["pause", "resume", "enable", "disable", "run"]
ACTIONS: Final[tuple[SelectionAction, ...]] = ("pause", "resume", "enable", "disable", "run")
# The permission each action needs: its single-row twin's (the API's routes declare
# the same; the console's selection bar reads this).
NEEDS: Final[dict[SelectionAction, Action]] = {
    "pause": Action.UPDATE,
    "resume": Action.UPDATE,
    "enable": Action.TOGGLE,
    "disable": Action.TOGGLE,
    "run": Action.RUN,
}
MAX_UNCONFIRMED: Final = 1000
Outcome = Literal["changed", "already", "refused"]


def already(action: SelectionAction, schedule: Schedule) -> bool:
    """True when `schedule` is already what `action` makes it (a run never is)."""
    if action == "pause":
        return schedule.paused
    if action == "resume":
        return not schedule.paused
    if action == "enable":
        return schedule.enabled
    if action == "disable":
        return not schedule.enabled
    return False


def check_confirmed(selected: int, *, confirm: bool, dry_run: bool) -> None:
    """InvalidRequest when a selection over MAX_UNCONFIRMED rows would change unconfirmed."""
    if selected > MAX_UNCONFIRMED and not confirm and not dry_run:
        raise InvalidRequest(
            f"{selected} rows selected: more than {MAX_UNCONFIRMED} need a confirmation "
            '(--yes, or "confirm": true); a dry run lists them',
            {"field": "confirm", "selected": selected, "limit": MAX_UNCONFIRMED},
        )


@dataclass(frozen=True, slots=True)
class SelectedRow:
    """One row of a selection and what became of it (`code`/`message`: why refused)."""

    stack: str
    environment: str
    name: str
    outcome: Outcome
    code: str | None = None
    message: str | None = None
    item_id: str | None = None  # a run's queue item

    def to_dict(self) -> dict[str, Any]:
        """The row as the API and `--json` show it (unset fields left out)."""
        shown = {
            "stack": self.stack,
            "environment": self.environment,
            "name": self.name,
            "outcome": self.outcome,
        }
        extra = {"code": self.code, "message": self.message, "item_id": self.item_id}
        return {**shown, **{key: value for key, value in extra.items() if value is not None}}


@dataclass(frozen=True, slots=True)
class SelectionReport:
    """What an action by selector did (a dry run: what it would do), row by row."""

    action: SelectionAction
    selector: str | None
    search: str | None
    dry_run: bool
    rows: tuple[SelectedRow, ...] = field(default=())

    def count(self, outcome: Outcome) -> int:
        """How many rows had this outcome."""
        return sum(row.outcome == outcome for row in self.rows)

    def to_dict(self) -> dict[str, Any]:
        """The report as the API and `--json` show it."""
        return {
            "action": self.action,
            "selector": self.selector,
            "search": self.search,
            "dry_run": self.dry_run,
            "selected": len(self.rows),
            "changed": self.count("changed"),
            "refused": self.count("refused"),
            "already": self.count("already"),
            "rows": [row.to_dict() for row in self.rows],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SelectionReport:
        """The report an API answer carries (the remote client's reading)."""
        rows = tuple(
            SelectedRow(
                stack=row["stack"],
                environment=row["environment"],
                name=row["name"],
                outcome=row["outcome"],
                code=row.get("code"),
                message=row.get("message"),
                item_id=row.get("item_id"),
            )
            for row in data["rows"]
        )
        return cls(data["action"], data["selector"], data["search"], data["dry_run"], rows)
