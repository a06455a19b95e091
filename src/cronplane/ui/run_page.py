"""The run page of one queue item: its attempts with their output, result and events.

Routes (one service call, guarded by its action):

    GET  /runs/{item_id}    Reader    RunService.item_logs

Linked from a schedule's History tab (each item, and a failure's cause) and
from the Jobs page's items. What it shows is `cronplane queue logs ITEM`'s:
each attempt's start, end, outcome, worker, error and output (a command's
stdout and stderr, a python target's log records, a webhook's status and body
excerpt), redacted (core.attempts); the item's result; the item's events.
Output is a `<pre>` that wraps long lines at any character only when a word
does not fit, so a phone's 390 px column still reads as lines, not a word a line.
"""

from __future__ import annotations

from uuid import UUID

from fastapi import Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.redact import redact_text, redact_value
from cronplane.ui.history import attempts_text, item_tone
from cronplane.ui.pages import render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader

router = page_router()

OUTCOME_TONES = {
    "succeeded": "ok",
    "retry": "warn",
    "failed": "bad",
    "timeout": "bad",
    "cancelled": "muted",
}


@router.get("/runs/{item_id}")
def run_page(request: Request, session: Reader, item_id: UUID) -> Response:
    """One item's run: attempts with timings and output, result, events."""
    log = context_of(request).service.runs.item_logs(session.tenant, item_id)
    item = log.item
    return render(
        request,
        "run.html",
        {
            "session": session,
            "section": "jobs",
            "log": log,
            "item": item,
            "tone": item_tone(item),
            "attempts_text": attempts_text(item),
            "error": None if item.error is None else redact_text(item.error),
            "result": redact_value(item.result),
            "outcome_tones": OUTCOME_TONES,
            "redact": redact_text,
            "zone": "UTC",
        },
    )
