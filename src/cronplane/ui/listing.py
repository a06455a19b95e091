"""The schedule listing: filters (stack, environment, source, status), search, paging.

Filters and search go straight to `ScheduleService.list_schedules` (search:
a case-insensitive substring of name, job, stack or environment, matched by
the store), so paging is the service's keyset paging.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Annotated, Final
from urllib.parse import urlencode

from fastapi import Query, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.access import Action
from cronplane.core.model import Schedule
from cronplane.errors import CronplaneError
from cronplane.service import ScheduleService
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader

router = page_router()

PAGE_SIZE: Final = 20
Text = Annotated[str, Query(max_length=128)]


@dataclass(frozen=True, slots=True)
class Filters:
    """What the listing shows: the filter form's values and the page cursor."""

    stack: str = ""
    environment: str = ""
    source: str = ""
    status: str = ""
    q: str = ""
    cursor: str = ""

    @property
    def active(self) -> bool:
        """True when any filter or search is set."""
        return any((self.stack, self.environment, self.source, self.status, self.q))

    def link(self, **changes: str) -> str:
        """The listing URL for these filters with `changes` applied (empty values dropped)."""
        values = asdict(replace(self, **changes))
        return "/?" + urlencode({key: value for key, value in values.items() if value})


def find_page(
    service: ScheduleService, tenant: str, filters: Filters, limit: int = PAGE_SIZE
) -> tuple[list[Schedule], str | None]:
    """One page of rows for `filters`, and the cursor of the next page (None: last)."""
    page = service.list_schedules(
        tenant,
        stack=filters.stack or None,
        environment=filters.environment or None,
        source=filters.source or None,
        enabled={"active": True, "inactive": False}.get(filters.status),
        search=filters.q or None,
        cursor=filters.cursor or None,
        limit=limit,
    )
    return list(page.items), page.next_cursor


@router.get("/")
def listing(
    request: Request,
    session: Reader,
    stack: Text = "",
    environment: Text = "",
    source: Annotated[str, Query(pattern="^(|app|user|system)$")] = "",
    status: Annotated[str, Query(pattern="^(|active|inactive)$")] = "",
    q: Text = "",
    cursor: Annotated[str, Query(max_length=1024)] = "",
    notice: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    """The tenant's schedules, filtered, searched and paged."""
    ctx = context_of(request)
    filters = Filters(stack.strip(), environment.strip(), source, status, q.strip(), cursor)
    error = None
    rows: list[Schedule] = []
    next_cursor = None
    try:
        rows, next_cursor = find_page(ctx.service, session.tenant, filters)
    except CronplaneError as refused:
        error = refused
    stacks = sorted({job.stack for job in ctx.service.list_jobs(session.tenant)})
    return render(
        request,
        "listing.html",
        {
            "session": session,
            "rows": rows,
            "filters": filters,
            "next_link": filters.link(cursor=next_cursor) if next_cursor else None,
            "first_link": filters.link(cursor="") if filters.cursor else None,
            "stacks": stacks,
            "error": error_context(error),
            "notice": notice,
            "can_create": session.can(Action.CREATE),
        },
        status_code=error.status if error else 200,
    )
