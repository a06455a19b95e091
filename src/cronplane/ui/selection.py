"""The listing's selection: label chips, a selector filter, and actions over every row a
selector or search names (not just the page), as `schedule pause -l …` does.

Routes (each one service call, each guarded by its action):

    POST /schedules/selection    Toggler; pause and resume need Updater's permission too
                                 Selections.act over the listing's selector and search

A chip (`team=payments` under a row's name) adds its label to the listing's
selector (core.selectors.with_label); the selection bar shows when a selector or a
search is set.
"""

from __future__ import annotations

from typing import Final

from fastapi import Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selections import NEEDS, SelectionAction, SelectionReport
from cronplane.errors import CronplaneError, Forbidden
from cronplane.ui.pages import to_listing
from cronplane.ui.route import page_router
from cronplane.ui.session import Toggler

router = page_router()
# The bar's four actions, and how the notice says each was done.
PAST: Final[dict[SelectionAction, str]] = {
    "pause": "Paused",
    "resume": "Resumed",
    "enable": "Enabled",
    "disable": "Disabled",
}
MAX_FIELD: Final = 512


def summary(report: SelectionReport) -> str:
    """The notice after an action: how many changed, were already so, were refused."""
    done = report.count("changed")
    text = f"{PAST[report.action]} {done} schedule{'s' if done != 1 else ''}"
    already = report.count("already")
    if already:
        text += f"; {already} already {PAST[report.action].lower()}"
    return text + "."


@router.post("/schedules/selection")
async def act(request: Request, session: Toggler) -> Response:
    """Pause, resume, enable or disable every row the listing's selector and search name."""
    form = await request.form()
    fields = {k: v.strip()[:MAX_FIELD] for k, v in form.items() if isinstance(v, str)}
    action = next((known for known in PAST if known == fields.get("action")), None)
    back = fields.get("back")
    query = ScheduleQuery(
        stack=fields.get("stack") or None,
        environment=fields.get("environment") or None,
        search=fields.get("q") or None,
        selector=fields.get("selector") or None,
    )
    answer: dict[str, str] = {}
    try:
        if action is None or not session.can(NEEDS[action]):
            raise Forbidden(f"role {session.principal.role.value} may not {action or 'act'} here")
        report = context_of(request).service.act_on_selection(
            session.tenant,
            action,
            query,
            actor=session.principal.actor,
            confirm=fields.get("confirm") == "on",
        )
        answer["notice"] = summary(report)
        refused = [row for row in report.rows if row.outcome == "refused"]
        if refused:
            answer["refused"] = "Refused: " + "; ".join(
                f"{row.name}: {row.code} {row.message}" for row in refused[:10]
            )
    except CronplaneError as error:
        answer["refused"] = f"{error.code.text}: {error.message}"
    shown = {key: value[:500] for key, value in answer.items()}
    return to_listing(back, shown)
