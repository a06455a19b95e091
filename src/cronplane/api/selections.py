"""Actions by selector (issue 37): `POST /tenants/{tenant}/schedules/actions/{action}`.

One route per action so each declares its own access rule, as its single-row
twin does: pause and resume need UPDATE, enable and disable TOGGLE, run RUN.
The body names the rows (`selector`, `q` or `search`, optional `stack` and
`environment`) and how (`dry_run`, `confirm` for more than 1,000 rows, and the
action's own options); the answer is the report (core.selections). Each route
parses, makes one service call (service.selections) and renders.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from fastapi import APIRouter, Depends
from pydantic import ConfigDict, Field

from cronplane.api.auth import CanRun, CanToggle, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import MAX_TEXT, NUL_FREE, NameFilter, NameSegment, Request
from cronplane.api.schemas import Response as Answer
from cronplane.core.controls import Missed
from cronplane.core.queries import MAX_SEARCH, ScheduleQuery, either_search
from cronplane.core.selections import SelectionAction
from cronplane.core.selectors import MAX_TEXT as MAX_SELECTOR
from cronplane.core.selectors import REQUIREMENTS_REGEX, SELECTOR_REGEX

router = APIRouter(prefix="/tenants/{tenant}/schedules/actions", tags=["schedules"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment


# Described for clients and fuzzers: a body names rows by a selector with a requirement,
# or by a search that is not blank (else 400, `detail.field` = `selector`).
_TEXT: Final = "^[^\\x00]*[^\\x00\\s][^\\x00]*$"  # not blank, no NUL
_NAMED: Final[dict[str, Any]] = {
    "anyOf": [
        {
            "required": ["selector"],
            "properties": {"selector": {"type": "string", "pattern": REQUIREMENTS_REGEX}},
        },
        *(
            {
                "required": [field],
                "properties": {field: {"type": "string", "pattern": _TEXT}},
            }
            for field in ("q", "search")
        ),
    ]
}


class SelectionBody(Request):
    """The rows (a selector and/or a search, within a stack and environment if given)
    and how: `dry_run` lists them and changes nothing; `confirm` is needed to change
    more than 1,000. `until`, `note` (and `missed` with `until`) are pause's; `missed` is
    resume's too (absent: skip)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_NAMED)

    selector: str | None = Field(
        default=None, max_length=MAX_SELECTOR, json_schema_extra={"pattern": SELECTOR_REGEX}
    )
    q: str | None = Field(default=None, max_length=MAX_SEARCH, json_schema_extra=NUL_FREE)
    search: str | None = Field(default=None, max_length=MAX_SEARCH, json_schema_extra=NUL_FREE)
    stack: NameFilter = None
    environment: NameFilter = None
    dry_run: bool = False
    confirm: bool = False
    until: Annotated[str, Field(max_length=64)] | None = None
    note: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    missed: Missed | None = None


class SelectedRowOut(Answer):
    """One selected row and its outcome: changed (in a dry run: would change), already
    in that state, or refused (`code` and `message` say why); a run's `item_id`."""

    stack: str
    environment: str
    name: str
    outcome: str
    code: str | None = None
    message: str | None = None
    item_id: str | None = None


class SelectionOut(Answer):
    """What an action by selector did (or, in a dry run, would do), row by row."""

    action: str
    selector: str | None
    search: str | None
    dry_run: bool
    selected: int
    changed: int
    refused: int
    already: int
    rows: list[SelectedRowOut]


def _act(
    ctx: ApiContext, tenant: str, action: SelectionAction, actor: str, body: SelectionBody
) -> dict[str, Any]:
    query = ScheduleQuery(
        stack=body.stack,
        environment=body.environment,
        search=either_search(body.search, body.q),
        selector=body.selector,
    )
    report = ctx.service.act_on_selection(
        tenant,
        action,
        query,
        actor=actor,
        dry_run=body.dry_run,
        confirm=body.confirm,
        until=body.until,
        note=body.note,
        missed=body.missed,
    )
    return report.to_dict()


@router.post("/pause", response_model=SelectionOut, summary="Pause the selected schedules")
def pause_selection(
    ctx: Context, principal: CanUpdate, tenant: Segment, body: SelectionBody
) -> dict[str, Any]:
    """Pause every selected row (`until`, `note`, `missed` as for one); paused rows are
    `already`."""
    return _act(ctx, tenant, "pause", principal.actor, body)


@router.post("/resume", response_model=SelectionOut, summary="Resume the selected schedules")
def resume_selection(
    ctx: Context, principal: CanUpdate, tenant: Segment, body: SelectionBody
) -> dict[str, Any]:
    """Resume every selected paused row (`missed` as for one)."""
    return _act(ctx, tenant, "resume", principal.actor, body)


@router.post("/enable", response_model=SelectionOut, summary="Enable the selected schedules")
def enable_selection(
    ctx: Context, principal: CanToggle, tenant: Segment, body: SelectionBody
) -> dict[str, Any]:
    """Enable every selected disabled row."""
    return _act(ctx, tenant, "enable", principal.actor, body)


@router.post("/disable", response_model=SelectionOut, summary="Disable the selected schedules")
def disable_selection(
    ctx: Context, principal: CanToggle, tenant: Segment, body: SelectionBody
) -> dict[str, Any]:
    """Disable every selected enabled row."""
    return _act(ctx, tenant, "disable", principal.actor, body)


@router.post("/run", response_model=SelectionOut, summary="Run the selected schedules now")
def run_selection(
    ctx: Context, principal: CanRun, tenant: Segment, body: SelectionBody
) -> dict[str, Any]:
    """Enqueue one run now of every selected row (each row's `item_id`)."""
    return _act(ctx, tenant, "run", principal.actor, body)
