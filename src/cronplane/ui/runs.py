"""Run now (from the editor or a listing row), the run's status polled until it finishes.

`POST /schedules/{stack}/{environment}/{name}/run` (the editor) and
`POST /ui/run` (a listing row: the key in form fields) call
`RunService.run_now` (the API's run-now: source manual, priority 5, expires
in 5 h) and answer the item's partial; while the item is queued or running
that partial asks htmx to poll `GET /ui/items/{id}` every second, and stops
once it finished. An answer that shows the item in a state the page had not
shown yet (queued, running, a failed attempt waiting for its retry,
finished; the poll carries the state it last saw) carries
`HX-Trigger: run-changed`, so the History tab reloads itself
(`GET .../history`).
"""

from __future__ import annotations

from typing import Annotated, Any, Final
from uuid import UUID

from fastapi import Form, Path, Query, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.model import QueueItem, Scope
from cronplane.errors import CronplaneError
from cronplane.ui.form import payload_object
from cronplane.ui.history import (
    HISTORY_EVENTS,
    HISTORY_ITEMS,
    History,
    attempts_text,
    history_of,
    item_tone,
)
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Runner, Session

router = page_router()
Segment = Annotated[str, Path(min_length=1, max_length=128)]
Field = Annotated[str, Form(min_length=1, max_length=128)]
# The Run dialog's payload text; the service refuses one over its size limit with its code.
RunPayload = Annotated[str | None, Form(max_length=1024 * 1024)]
RUN_CHANGED: Final = {"HX-Trigger": "run-changed"}


def history(request: Request, scope: Scope, name: str) -> History:
    """A schedule's History tab: its events and its newest items."""
    service = context_of(request).service
    schedule = service.get_schedule(scope, name)
    events = service.schedule_history(scope, name, limit=HISTORY_EVENTS)
    items = service.list_items(scope.tenant, schedule_id=schedule.id, limit=HISTORY_ITEMS)
    return history_of(events, items)


def run_state(item: QueueItem) -> str:
    """What the History tab shows of a run: its status and how many attempts it made."""
    return f"{item.status}/{item.attempts}"


def _item(
    request: Request,
    item: QueueItem | None,
    error: CronplaneError | None,
    *,
    zone: str = "UTC",
    label: str = "",
    announce: bool = False,
) -> Response:
    response = render(
        request,
        "_run_status.html",
        {
            "item": item,
            "tone": item_tone(item) if item else "bad",
            "result": item.result if item else None,
            "error": error_context(error),
            "zone": zone,
            "label": label,
            "seen": run_state(item) if item else "",
        },
    )
    if announce:
        response.headers.update(RUN_CHANGED)
    return response


def _run(
    request: Request, session: Session, scope: Scope, name: str, payload_text: str | None = None
) -> Response:
    service = context_of(request).service
    try:
        schedule = service.get_schedule(scope, name)
        payload = _payload_for_run(payload_text, schedule.payload)
        item = service.runs.run_now(scope, name, actor=session.principal.actor, payload=payload)
        zone = schedule.timezone
    except CronplaneError as error:
        return _item(request, None, error)
    return _item(request, item, None, zone=zone, label=name, announce=True)


def _payload_for_run(text: str | None, saved: dict[str, Any]) -> dict[str, Any] | None:
    """The Run dialog's payload: None when absent or the saved one (no override recorded)."""
    if text is None or not text.strip():
        return None
    value = payload_object(text)
    return None if value == saved else value


@router.post("/schedules/{stack}/{environment}/{name}/run")
def run_now(
    request: Request,
    session: Runner,
    stack: Segment,
    environment: Segment,
    name: Segment,
    payload: RunPayload = None,
) -> Response:
    """Enqueue the schedule's job now (with the dialog's payload) and show the queued item."""
    return _run(request, session, Scope(session.tenant, stack, environment), name, payload)


@router.post("/ui/run")
def run_row(
    request: Request, session: Runner, stack: Field, environment: Field, name: Field
) -> Response:
    """Run now from a listing row (the row's key in the confirmation form)."""
    return _run(request, session, Scope(session.tenant, stack, environment), name)


@router.get("/ui/items/{item_id}")
def item_status(
    request: Request,
    session: Reader,
    item_id: UUID,
    zone: Annotated[str, Query(max_length=64)] = "UTC",
    label: Annotated[str, Query(max_length=128)] = "",
    seen: Annotated[str, Query(max_length=64)] = "",
) -> Response:
    """One queue item's status (polled while it is queued or running); `seen`: the
    state the page shows, so a change of it reloads the History tab."""
    try:
        item = context_of(request).service.runs.get_item(session.tenant, item_id)
    except CronplaneError as error:
        return _item(request, None, error)
    changed = run_state(item) != seen
    return _item(request, item, None, zone=zone, label=label, announce=changed)


@router.get("/schedules/{stack}/{environment}/{name}/history")
def history_panel(
    request: Request, session: Reader, stack: Segment, environment: Segment, name: Segment
) -> Response:
    """The History tab's body, reloaded when a run is queued or finishes."""
    scope = Scope(session.tenant, stack, environment)
    schedule = context_of(request).service.get_schedule(scope, name)
    return render(
        request,
        "_history.html",
        {
            "session": session,
            "schedule": schedule,
            "history": history(request, scope, name),
            "item_tone": item_tone,
            "attempts_text": attempts_text,
        },
    )
