"""The schedule listing: filters, search, paging, each row's last outcome, row actions.

Filters and search go straight to `ScheduleService.list_schedules` (search:
a case-insensitive substring of name, job, stack or environment, matched by
the store), so paging is the service's keyset paging. Each row also shows
whether it ever fired (`RunService.fired_schedules`) and its last 12 items
(`RunService.recent_items`): the newest is its last outcome, all of them its
sparkline; two queries per page. Row actions: Run (confirmed in a
dialog, `POST /ui/run`) and Enable/Disable; bulk Enable/Disable posts the
checked rows to `POST /schedules/bulk`, one service call per row, each with
the revision the page showed (a row changed since is refused, not toggled).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Annotated, Final
from urllib.parse import quote, unquote, urlencode

from fastapi import Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.access import Action
from cronplane.core.model import Schedule, Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selectors import with_label
from cronplane.errors import CronplaneError, InvalidRequest
from cronplane.service import ScheduleService
from cronplane.ui.history import item_tone
from cronplane.ui.pages import error_context, render, to_listing
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Session, Toggler
from cronplane.ui.timeline import sparkline

router = page_router()

PAGE_SIZE: Final = 20
MAX_BULK: Final = 100
MAX_NOTICE: Final = 500
SPARK_RUNS: Final = 12  # a row's recent items its sparkline draws
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
    selector: str = ""

    @property
    def active(self) -> bool:
        """True when any filter or search is set."""
        return any((self.stack, self.environment, self.source, self.status, self.q, self.selector))

    @property
    def selects(self) -> bool:
        """True when a selector or a search names rows an action may take (ui.selection)."""
        return bool(self.selector or self.q)

    def link(self, **changes: str) -> str:
        """The listing URL for these filters with `changes` applied (empty values dropped)."""
        values = asdict(replace(self, **changes))
        return "/?" + urlencode({key: value for key, value in values.items() if value})


def find_page(
    service: ScheduleService, tenant: str, filters: Filters, limit: int = PAGE_SIZE
) -> tuple[list[Schedule], str | None]:
    """One page of rows for `filters`, and the cursor of the next page (None: last)."""
    query = ScheduleQuery(
        stack=filters.stack or None,
        environment=filters.environment or None,
        source=filters.source or None,
        enabled={"active": True, "inactive": False}.get(filters.status),
        search=filters.q or None,
        selector=filters.selector or None,
        cursor=filters.cursor or None,
        limit=limit,
    )
    page = service.list_schedules(tenant, query)
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
    selector: Annotated[str, Query(max_length=1024)] = "",
    notice: Annotated[str, Query(max_length=MAX_NOTICE)] = "",
    refused: Annotated[str, Query(max_length=MAX_NOTICE)] = "",
) -> Response:
    """The tenant's schedules, filtered, searched and paged."""
    ctx = context_of(request)
    filters = Filters(
        stack.strip(), environment.strip(), source, status, q.strip(), cursor, selector.strip()
    )
    error = None
    rows: list[Schedule] = []
    next_cursor = None
    try:
        rows, next_cursor = find_page(ctx.service, session.tenant, filters)
    except CronplaneError as refused:
        error = refused
    stacks = sorted({job.stack for job in ctx.service.list_jobs(session.tenant)})
    ids = [row.id for row in rows]
    recent = ctx.service.runs.recent_items(session.tenant, ids, SPARK_RUNS)
    return render(
        request,
        "listing.html",
        {
            "session": session,
            "section": "schedules",
            "rows": rows,
            "filters": filters,
            "next_link": filters.link(cursor=next_cursor) if next_cursor else None,
            "first_link": filters.link(cursor="") if filters.cursor else None,
            "stacks": stacks,
            "error": error_context(error),
            "notice": notice,
            "refused": refused,
            "can_create": session.can(Action.CREATE),
            "fired": ctx.service.runs.fired_schedules(session.tenant, ids),
            # The last outcome is the newest of a row's recent items: one read for both.
            "last_items": {row_id: items[-1] for row_id, items in recent.items()},
            "recent": recent,
            "alert_counts": ctx.service.alerts.open_counts(session.tenant, ids),
            "item_tone": item_tone,
            "row_key": row_key,
            "with_label": with_label,
            "sparkline": sparkline,
        },
        status_code=error.status if error else 200,
    )


def row_key(schedule: Schedule) -> str:
    """A row's key and revision as one form value: `revision stack/environment/name`."""
    parts = (schedule.stack, schedule.environment, schedule.name)
    return f"{schedule.revision} " + "/".join(quote(part, safe="") for part in parts)


def _parse_key(value: str) -> tuple[int, str, str, str]:
    revision, _, key = value.partition(" ")
    parts = [unquote(part) for part in key.split("/")]
    if not revision.isdigit() or len(parts) != 3 or not all(parts):
        raise InvalidRequest(f"not a schedule key: {value[:80]!r}", {"field": "key"})
    return int(revision), parts[0], parts[1], parts[2]


def _toggle(request: Request, session: Session, verb: str, value: str) -> str:
    """Enable or disable one row; the refusal's code and message, or ''."""
    service = context_of(request).service
    try:
        revision, stack, environment, name = _parse_key(value)
        scope = Scope(session.tenant, stack, environment)
        change = service.enable_schedule if verb == "enable" else service.disable_schedule
        change(scope, name, actor=session.principal.actor, revision=revision)
    except CronplaneError as error:
        return f"{value.partition(' ')[2]}: {error.code.text} {error.message}"
    return ""


@router.post("/schedules/bulk")
async def bulk(request: Request, session: Toggler) -> Response:
    """Enable or disable the checked rows (`key`), or one row (`row` = "verb key")."""
    form = await request.form()
    row = form.get("row")
    if isinstance(row, str) and row:
        verb, _, value = row.partition(" ")
        keys = [value]
    else:
        action = form.get("action")
        verb = action if isinstance(action, str) else ""
        keys = [key for key in form.getlist("key") if isinstance(key, str)][:MAX_BULK]
    if verb not in ("enable", "disable") or not keys:
        notice = "Nothing to do: check the schedules to enable or disable first."
        return RedirectResponse("/?" + urlencode({"notice": notice}), status_code=303)
    refused = [
        problem
        for problem in [
            await run_in_threadpool(_toggle, request, session, verb, key) for key in keys
        ]
        if problem
    ]
    done = len(keys) - len(refused)
    past = "Enabled" if verb == "enable" else "Disabled"
    query = {"notice": f"{past} {done} schedule{'s' if done != 1 else ''}."}
    if refused:
        query["refused"] = "Refused: " + "; ".join(refused)
    shown = {key: value[:MAX_NOTICE] for key, value in query.items()}
    return to_listing(form.get("back"), shown)
