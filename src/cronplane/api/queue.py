"""Queue routes: the tenant's items, one item, cancel; and run-now on a schedule.

Run now (SPEC §6) enqueues one item at once (source `manual`, priority 5,
expires in 5 h) and leaves `last_run`/`next_run` alone; with `wait` the
answer is the item once finished (or as it is when `timeout` passes).
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Final
from uuid import UUID

from fastapi import APIRouter, Body, Depends, Query, status

from cronplane.api.auth import CanRead, CanRun
from cronplane.api.context import ApiContext, current_context
from cronplane.api.run_schemas import RunLogOut
from cronplane.api.schemas import NameSegment, QueueItemList, QueueItemOut, RunBody
from cronplane.core.model import Scope

# Tags per route: run now is a schedule operation (`schedules_run`), grouped with them.
router = APIRouter(prefix="/tenants/{tenant}")
QUEUE: Final[list[str | Enum]] = ["queue"]
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
STATUS_PATTERN = "^(queued|running|succeeded|failed|expired|cancelled)$"
MAX_WAIT_SECONDS = 30.0  # a request thread is held while waiting


@router.get("/queue/items", response_model=QueueItemList, summary="List queue items", tags=QUEUE)
def list_items(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    status: Annotated[str | None, Query(pattern=STATUS_PATTERN)] = None,
    schedule_id: UUID | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The tenant's items, newest first, optionally of one status or schedule."""
    items = ctx.service.list_items(tenant, status=status, schedule_id=schedule_id, limit=limit)
    return {"items": [item.to_dict() for item in items]}


@router.get(
    "/queue/items/{item_id}", response_model=QueueItemOut, summary="Get a queue item", tags=QUEUE
)
def get_item(ctx: Context, _: CanRead, tenant: Segment, item_id: UUID) -> dict[str, Any]:
    """One item of the tenant (another tenant's id is simply not found)."""
    return ctx.service.get_item(tenant, item_id).to_dict()


@router.get(
    "/queue/items/{item_id}/logs",
    response_model=RunLogOut,
    summary="A queue item's attempts and output",
    tags=QUEUE,
)
def item_logs(ctx: Context, _: CanRead, tenant: Segment, item_id: UUID) -> dict[str, Any]:
    """The item with each attempt that ended (its start, end, outcome, error and output:
    a command's stdout/stderr tails, a python target's log records, a webhook's status
    and body excerpt) and the item's events; credentials in URLs masked. 404
    X404904ITMNFD for an item not of the tenant."""
    return ctx.service.item_logs(tenant, item_id).to_dict()


@router.post(
    "/queue/items/{item_id}/cancel",
    response_model=QueueItemOut,
    summary="Cancel a queue item",
    tags=QUEUE,
)
def cancel_item(ctx: Context, principal: CanRun, tenant: Segment, item_id: UUID) -> dict[str, Any]:
    """Cancel a queued item at once (status `cancelled`); ask a running one to stop
    (`cancel_requested_at`, `cancelled_by`: its worker stops the run and records
    `cancelled`). 409 X409200ITMFIN when the item already finished (nothing changes)."""
    return ctx.service.cancel_item(tenant, item_id, actor=principal.actor).to_dict()


@router.post(
    "/schedules/{stack}/{environment}/{name}/run",
    response_model=QueueItemOut,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Run a schedule now",
    tags=["schedules"],
)
def run_now(
    ctx: Context,
    principal: CanRun,
    tenant: Segment,
    stack: Segment,
    environment: Segment,
    name: Segment,
    body: Annotated[RunBody | None, Body()] = None,
    wait: bool = False,
    timeout: Annotated[float, Query(gt=0, le=MAX_WAIT_SECONDS)] = MAX_WAIT_SECONDS,
) -> dict[str, Any]:
    """Enqueue the schedule's job now; with `wait`, answer with the item once final or
    when `timeout` (at most 30 s: a request thread is held) passes, whichever is first:
    a client wanting longer polls the item. An optional body `{"payload": {…}}`
    replaces the schedule's payload for this run (the job's schema applies)."""
    payload = None if body is None else body.payload
    item = ctx.service.run_now(
        Scope(tenant, stack, environment), name, actor=principal.actor, payload=payload
    )
    if wait:
        item = ctx.service.wait(tenant, item.id, timeout=timeout)
    return item.to_dict()
