"""What a listing of schedules asks for: one value every layer passes on.

The CLI, the console and the API build a `ScheduleQuery`; the service port,
the remote client (`params`) and the store (`store.schedules.list_page`)
take it whole. A new filter is one field here and one condition in the
store (and its query parameter in the API's model, which
tests/api/test_schedule_query.py holds to this one).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from cronplane.core.choices import SOURCES
from cronplane.core.selectors import Selector, parse_selector
from cronplane.errors import InvalidRequest

MAX_SEARCH: Final = 128
MAX_PAGE: Final = 1000


def check_limit(limit: int) -> None:
    """InvalidRequest when a page size is outside 1..MAX_PAGE (every listing's bound)."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit {limit} is out of range 1..{MAX_PAGE}", {"field": "limit"})


def either_search(search: str | None, q: str | None) -> str | None:
    """The search a request gives as `search` or by its short name `q`: a blank `search`
    says nothing, so `q` names it then (the listing and actions by selector alike)."""
    return search if (search or "").strip() else q


@dataclass(frozen=True, slots=True)
class ScheduleQuery:
    """Filters (None: any) and the page: rows ordered by (name, stack, environment).

    `search` keeps rows whose name, job, cron, stack, environment, job title or a
    label value contains it (any case); `selector` keeps the rows a label
    selector (core.selectors) selects; `cursor` is the previous page's
    `next_cursor`."""

    stack: str | None = None
    environment: str | None = None
    source: str | None = None
    enabled: bool | None = None
    job: str | None = None
    search: str | None = None
    selector: str | None = None
    cursor: str | None = None
    limit: int = 100

    def checked(self) -> ScheduleQuery:
        """This query with `search` trimmed and `selector` canonical (blank: none), or
        InvalidRequest."""
        check_limit(self.limit)
        if self.source is not None and self.source not in SOURCES:
            raise InvalidRequest(f"source {self.source!r} is invalid", {"field": "source"})
        search = (self.search or "").strip() or None
        if search is not None and len(search) > MAX_SEARCH:
            raise InvalidRequest(
                f"search is longer than {MAX_SEARCH} characters", {"field": "search"}
            )
        selector = str(parse_selector(self.selector)) if self.selector else ""
        return replace(self, search=search, selector=selector or None)

    def selection(self) -> Selector:
        """The selector this query names (none: every row)."""
        return parse_selector(self.selector or "")

    def params(self) -> dict[str, Any]:
        """The query string's parameters (the API's names), those set."""
        values = ((f.name, getattr(self, f.name)) for f in fields(self))
        return {name: value for name, value in values if value is not None}
