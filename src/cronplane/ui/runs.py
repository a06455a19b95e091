"""Run now from the editor, and the run's status polled until it finishes.

`POST /schedules/{stack}/{environment}/{name}/run` calls `RunService.run_now`
(the API's run-now: source manual, priority 5, expires in 5 h) and answers
the item's partial; while the item is queued or running that partial asks
htmx to poll `GET /ui/items/{id}` every second, and stops once it finished.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import Path, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.model import QueueItem, Scope
from cronplane.errors import CronplaneError
from cronplane.ui.history import item_tone
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Runner

router = page_router()
Segment = Annotated[str, Path(min_length=1, max_length=128)]


def _item(request: Request, item: QueueItem | None, error: CronplaneError | None) -> Response:
    return render(
        request,
        "_run_status.html",
        {
            "item": item,
            "tone": item_tone(item) if item else "bad",
            "result": item.result if item else None,
            "error": error_context(error),
        },
    )


@router.post("/schedules/{stack}/{environment}/{name}/run")
def run_now(
    request: Request, session: Runner, stack: Segment, environment: Segment, name: Segment
) -> Response:
    """Enqueue the schedule's job now and show the queued item."""
    runs = context_of(request).service.runs
    try:
        item = runs.run_now(
            Scope(session.tenant, stack, environment), name, actor=session.principal.actor
        )
    except CronplaneError as error:
        return _item(request, None, error)
    return _item(request, item, None)


@router.get("/ui/items/{item_id}")
def item_status(request: Request, session: Reader, item_id: UUID) -> Response:
    """One queue item's status (polled while it is queued or running)."""
    try:
        item = context_of(request).service.runs.get_item(session.tenant, item_id)
    except CronplaneError as error:
        return _item(request, None, error)
    return _item(request, item, None)
