"""Live feedback for the editor, as htmx partials: the cron explained, the payload checked.

- `GET /ui/cron/explain?cron=&timezone=&seed=`: core's `explain`, as the API answers it
  (normalized form, description, next 5 occurrences in the zone) or the coded error
  (X400001CRNINV quoting the input, X400004ZONINV for a zone).
- `GET /ui/instant?field=NAME&zone=[&timezone=]&NAME=TEXT`: a typed time (a 24-hour ISO wall time
  in the zone) as the UTC instant the service will read it as, with a note when a
  clock change skips or repeats it (`core.wall_times`), or why it is not a time.
- `POST /ui/payload/check`: the payload text parsed and checked with the
  service's validators against the chosen job's JSON Schema.

Partials answer 200 with the error inside, so htmx swaps them in place.
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Form, Query, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core import validation
from cronplane.core.dst import GAPS, REPEATS, DstPolicy
from cronplane.core.explain import explain
from cronplane.core.wall_times import read_wall_time
from cronplane.errors import CronplaneError
from cronplane.ui.form import payload_object
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, User

router = page_router()

PREVIEW_COUNT: Final = 5
Short = Annotated[str, Query(max_length=256)]


@router.get("/ui/cron/explain")
def cron_feedback(
    request: Request,
    session: User,
    cron: Short = "",
    timezone: Short = "UTC",
    seed: Short = "",
    dst_gap: Short = "",
    dst_repeat: Short = "",
) -> Response:
    """The expression explained in its zone under the DST policy chosen, or the coded
    refusal."""
    ctx = context_of(request)
    preview = None
    error = None
    if cron.strip():
        try:
            dst = DstPolicy(
                dst_gap if dst_gap in GAPS else "shift",
                dst_repeat if dst_repeat in REPEATS else None,
            )
            zone = timezone or "UTC"
            preview = explain(cron, zone, ctx.clock.now(), PREVIEW_COUNT, seed or None, dst=dst)
        except CronplaneError as refused:
            error = refused
    return render(
        request,
        "_cron_feedback.html",
        {"preview": preview, "error": error_context(error), "timezone": timezone or "UTC"},
    )


@router.get("/ui/instant")
def instant_feedback(
    request: Request,
    session: User,
    field: Annotated[str, Query(pattern="^(until|from|to|start_at|end_at)$")] = "until",
    zone: Short = "UTC",
    timezone: Short = "",
) -> Response:
    """The time typed in `field` (its own query parameter, as htmx sends an input) in UTC;
    in the editor, `timezone` is the zone chosen on its Cron tab (it wins over `zone`)."""
    zone = timezone or zone
    text = request.query_params.get(field, "")[:64]
    reading = problem = None
    if text.strip():
        try:
            reading = read_wall_time(text, zone)
        except (ValueError, KeyError) as refused:  # KeyError: an unknown zone name
            problem = str(refused) if isinstance(refused, ValueError) else "unknown zone"
    return render(
        request,
        "_instant_feedback.html",
        {"reading": reading, "problem": problem, "zone": zone},
    )


@router.post("/ui/payload/check")
def payload_feedback(
    request: Request,
    session: Reader,
    payload: Annotated[str, Form()] = "",
    job: Annotated[str, Form(max_length=256)] = "",
    stack: Annotated[str, Form(max_length=256)] = "",
) -> Response:
    """Whether the payload is a JSON object within limits and valid for the job's schema."""
    service = context_of(request).service
    error = None
    schema_checked = False
    try:
        value = validation.validate_payload(payload_object(payload or "{}"))
        if job and stack:
            schema = service.get_job(session.tenant, stack, job).payload_schema
            validation.validate_against_schema(value, schema)
            schema_checked = schema is not None
    except CronplaneError as refused:
        error = refused
    return render(
        request,
        "_payload_feedback.html",
        {"error": error_context(error), "schema_checked": schema_checked, "job": job},
    )
