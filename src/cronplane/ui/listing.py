"""The schedule listing: filters (stack, environment, source, status), search, paging.

Filters go straight to `ScheduleService.list_schedules`. Search is a
substring match on name, job, stack and environment, done here over the
service's keyset pages (the service has no text search): it scans forward
from the cursor until a page of matches is found, and the next cursor is
the last match's, so paging stays exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Annotated, Final
from urllib.parse import urlencode

from fastapi import Query, Request
from starlette.responses import Response

from cronplane.api.context import context_of
from cronplane.core.access import Action
from cronplane.core.model import Page, Schedule
from cronplane.errors import CronplaneError
from cronplane.service import ScheduleService
from cronplane.service.schedules import encode_cursor
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader

router = page_router()

PAGE_SIZE: Final = 20
SCAN_BATCH: Final = 200
MAX_SCANNED: Final = 5000  # rows looked at per search page; the next page continues
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


def matches(row: Schedule, needle: str) -> bool:
    """True when `needle` (casefolded) is in the row's name, job, stack or environment."""
    return any(
        needle in text.casefold() for text in (row.name, row.job, row.stack, row.environment)
    )


def find_page(
    service: ScheduleService, tenant: str, filters: Filters, limit: int = PAGE_SIZE
) -> tuple[list[Schedule], str | None]:
    """One page of rows for `filters`, and the cursor of the next page (None: last)."""
    enabled = {"active": True, "inactive": False}.get(filters.status)

    def fetch(cursor: str | None, size: int) -> Page:
        return service.list_schedules(
            tenant,
            stack=filters.stack or None,
            environment=filters.environment or None,
            source=filters.source or None,
            enabled=enabled,
            cursor=cursor,
            limit=size,
        )

    cursor = filters.cursor or None
    if not filters.q:
        page = fetch(cursor, limit)
        return list(page.items), page.next_cursor
    needle = filters.q.strip().casefold()
    kept: list[Schedule] = []
    scanned = 0
    while True:
        page = fetch(cursor, SCAN_BATCH)
        for index, row in enumerate(page.items):
            if not matches(row, needle):
                continue
            kept.append(row)
            if len(kept) == limit:
                more = index < len(page.items) - 1 or page.next_cursor is not None
                return kept, encode_cursor(row) if more else None
        scanned += len(page.items)
        if page.next_cursor is None or scanned >= MAX_SCANNED:
            return kept, page.next_cursor
        cursor = page.next_cursor


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
