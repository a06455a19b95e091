"""Business calendar routes (READ to list and show, UPDATE to save and remove); docs/cron.md,
"Business calendars". A calendar is saved whole: PUT creates or replaces it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import Field

from cronplane.api.auth import CanRead, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import NO_NUL, NameSegment, Request, Response, described
from cronplane.core.calendars import MAX_DATES, WEEKDAYS

router = APIRouter(prefix="/tenants/{tenant}", tags=["calendars"])
Context = Annotated[ApiContext, Depends(current_context)]
# What the service accepts, for the document (core.calendars is the rule; a region the
# holidays package lacks is X400364HOLINV, which no schema can describe).
Weekday = Annotated[str, Field(max_length=16), described(enum=list(WEEKDAYS))]
IsoDate = Annotated[str, Field(max_length=32), described(format="date")]
Region = Annotated[
    str, Field(max_length=16), described(pattern="^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,10})?$")
]


class CalendarBody(Request):
    """What a calendar excludes: weekdays (`sat`, `sun`), dates, and the public holidays
    of a country or subdivision (`GB-ENG`, `US`, `DE-BY`; the holidays package's codes)."""

    weekly: list[Weekday] = Field(default_factory=list, max_length=6)
    dates: list[IsoDate] = Field(default_factory=list, max_length=MAX_DATES)
    holidays: Region | None = None
    description: Annotated[str, Field(max_length=500), described(pattern=NO_NUL)] | None = None
    revision: int | None = Field(
        default=None, ge=0, le=2**31, description="The revision read (412 when it moved on)."
    )


class CalendarOut(Response):
    """A calendar as stored."""

    tenant: str
    name: str
    weekly: list[str]
    dates: list[str]
    holidays: str | None
    description: str | None
    revision: int
    created_at: str
    updated_at: str
    updated_by: str


class CalendarShown(CalendarOut):
    """A calendar with the schedules that exclude it."""

    schedules: list[str] = Field(description="stack/environment/name of the rows that exclude it")


class CalendarList(Response):
    """A tenant's calendars by name."""

    items: list[CalendarOut]


@router.get("/calendars", response_model=CalendarList, summary="List calendars")
def list_calendars(ctx: Context, _: CanRead, tenant: NameSegment) -> dict[str, Any]:
    """The tenant's business calendars."""
    return {"items": ctx.service.list_calendars(tenant)}


@router.get("/calendars/{name}", response_model=CalendarShown, summary="Show a calendar")
def get_calendar(ctx: Context, _: CanRead, tenant: NameSegment, name: NameSegment) -> Any:
    """One calendar, with the schedules that exclude it; 404 X404360CALNFD."""
    return ctx.service.get_calendar(tenant, name)


@router.put("/calendars/{name}", response_model=CalendarOut, summary="Save a calendar")
def save_calendar(
    ctx: Context, principal: CanUpdate, tenant: NameSegment, name: NameSegment, body: CalendarBody
) -> Any:
    """Create or replace; 400 X400007REQINV names the bad part (weekly, dates, holidays)."""
    return ctx.service.save_calendar(
        tenant,
        name,
        weekly=body.weekly,
        dates=body.dates,
        holidays=body.holidays,
        description=body.description,
        revision=body.revision,
        actor=principal.actor,
    )


@router.delete("/calendars/{name}", response_model=CalendarOut, summary="Remove a calendar")
def remove_calendar(
    ctx: Context, principal: CanUpdate, tenant: NameSegment, name: NameSegment
) -> Any:
    """409 X409905STATEX while a schedule excludes it."""
    return ctx.service.remove_calendar(tenant, name, actor=principal.actor)
