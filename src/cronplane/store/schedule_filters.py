"""A listing's filters as SQL on `schedules` joined to `schedule_state`.

`listing(conn, tenant, query, after=, limit=)` is the SELECT of what
`store.schedules.list_page` pages through and what an action by selector reads
whole (`list_all`): one definition of "the rows this query names".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, exists, not_, or_, select, tuple_, union_all
from sqlalchemy.sql import ColumnElement, Select

from cronplane.core.queries import ScheduleQuery
from cronplane.store import dialects, label_index
from cronplane.store.tables import (
    SCHEDULE_COLUMNS,
    SCHEDULE_ROWS,
    jobs,
    schedule_labels,
    schedule_state,
    schedules,
)

Order = tuple[Any, Any, Any]  # the columns a listing is ordered by: name, stack, environment
Keyset = tuple[str, str, str]


def listing(
    conn: Connection,
    tenant: str,
    filters: ScheduleQuery,
    *,
    after: Keyset | None = None,
    limit: int | None = None,
) -> Select[Any]:
    """The rows `filters` names, by (name, stack, environment), after the keyset `after`,
    at most `limit` (None: all).

    Without a selector: `schedules` by its name index. With one, the index range of
    the term label_index.driver chooses, ordered by its copy of the listing key:
    for one value the index yields that order; a small range (under COUNT_CAP) is
    sorted, on the index alone when only labels and the scope filter (then only
    the page's rows are read from `schedules`).
    """
    selector = filters.selection()
    if selector:
        # PostgreSQL would start workers for a page of a few hundred index entries.
        dialects.of(conn).serial(conn)
    walk = label_index.driver(conn, tenant, selector) if selector else None
    fixed = filters.stack is not None and filters.environment is not None
    if walk is None:
        order: Order = (schedules.c.name, schedules.c.stack, schedules.c.environment)
        found = conditions(tenant, filters) + _after(order, after, fixed)
        return _page(select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS), found, order, limit)
    merged = len(walk.ranges) > 1
    if merged and limit is not None and _labels_and_scope_only(filters):
        return _merged(tenant, filters, walk, after, limit, fixed)
    walked = schedule_labels.alias("walked")
    order = (walked.c.name, walked.c.stack, walked.c.environment)
    # One range in order: its own; several (not merged here): the term's whole, sorted.
    ranged = walk.term if merged else walk.ranges[0]
    # The other terms probe by the walked entry's id: no schedule row read until they hold.
    terms = label_index.range_of(walked, tenant, ranged) + label_index.selected(
        tenant, selector, but=walk.term, ids=walked.c.schedule_id
    )
    terms += _after(order, after, fixed)
    ordered = walk.ordered and not merged
    if limit is not None and not ordered and _labels_and_scope_only(filters):
        scoped = _scoped(walked, filters)
        inner = _page(select(walked.c.schedule_id, *order), terms + scoped, order, limit).subquery()
        rows = SCHEDULE_ROWS.join(inner, inner.c.schedule_id == schedules.c.id)
        by: Order = (inner.c.name, inner.c.stack, inner.c.environment)
        return select(*SCHEDULE_COLUMNS).select_from(rows).order_by(*by)
    rows = SCHEDULE_ROWS.join(walked, walked.c.schedule_id == schedules.c.id)
    found = conditions(tenant, filters, with_selector=False) + terms
    return _page(select(*SCHEDULE_COLUMNS).select_from(rows), found, order, limit)


def _merged(
    tenant: str,
    filters: ScheduleQuery,
    walk: label_index.Walk,
    after: Keyset | None,
    limit: int,
    fixed: bool,
) -> Select[Any]:
    """A page of an `in` term walked one value's range at a time: each range is in the
    listing's order, so each yields at most `limit` entries, and the page is the
    first `limit` of their union (a sort of at most `limit` × values index entries)."""
    selector = filters.selection()
    pages = []
    for number, branch in enumerate(walk.ranges):
        walked = schedule_labels.alias(f"walked_{number}")
        order: Order = (walked.c.name, walked.c.stack, walked.c.environment)
        found = label_index.range_of(walked, tenant, branch) + label_index.selected(
            tenant, selector, but=walk.term, ids=walked.c.schedule_id
        )
        found += _scoped(walked, filters)
        page = _page(
            select(walked.c.schedule_id, *order), found + _after(order, after, fixed), order, limit
        )
        pages.append(page.subquery().select())
    inner = union_all(*pages).subquery()
    by: Order = (inner.c.name, inner.c.stack, inner.c.environment)
    rows = SCHEDULE_ROWS.join(inner, inner.c.schedule_id == schedules.c.id)
    return select(*SCHEDULE_COLUMNS).select_from(rows).order_by(*by).limit(limit)


def _scoped(walked: Any, filters: ScheduleQuery) -> list[ColumnElement[bool]]:
    """The scope filter on a walked index alias (it carries the listing key)."""
    pairs = ((walked.c.stack, filters.stack), (walked.c.environment, filters.environment))
    return [column == value for column, value in pairs if value is not None]


def _labels_and_scope_only(filters: ScheduleQuery) -> bool:
    others = (filters.source, filters.enabled, filters.job, filters.search)
    return all(value is None for value in others)


def _page(
    query: Select[Any], found: list[ColumnElement[bool]], order: Order, limit: int | None
) -> Select[Any]:
    query = query.where(*found).order_by(*order)
    return query if limit is None else query.limit(limit)


def _after(order: Order, after: Keyset | None, fixed: bool) -> list[ColumnElement[bool]]:
    """The keyset condition: after (name, stack, environment). Written as `name >= :name
    AND NOT (...)` so an index range on name still applies (`name > :name` when the
    stack and environment are fixed: the name alone is then unique)."""
    if after is None:
        return []
    by_name, by_stack, by_env = order
    name, stack, environment = after
    if fixed:
        return [by_name > name]
    tie = and_(by_name == name, tuple_(by_stack, by_env) <= tuple_(stack, environment))
    return [by_name >= name, not_(tie)]


def conditions(
    tenant: str, filters: ScheduleQuery, *, with_selector: bool = True
) -> list[ColumnElement[bool]]:
    """The WHERE terms (all must hold) of the rows `filters` names in `tenant` (without
    the selector's when the caller walks the label index)."""
    found: list[ColumnElement[bool]] = [schedules.c.tenant == tenant]
    if filters.stack is not None:
        found.append(schedules.c.stack == filters.stack)
    if filters.environment is not None:
        found.append(schedules.c.environment == filters.environment)
    if filters.source is not None:
        found.append(schedules.c.source == filters.source)
    if filters.enabled is not None:
        found.append(schedule_state.c.enabled == filters.enabled)
    if filters.job is not None:
        found.append(schedules.c.job == filters.job)
    if filters.search:
        found.append(_search(filters.search))
    if with_selector:
        found.extend(label_index.selected(tenant, filters.selection()))
    return found


def _search(text: str) -> ColumnElement[bool]:
    """Rows whose name, job, cron, stack, environment, job title or a label value
    contains `text` (any case; autoescape: `%` and `_` match themselves)."""
    columns = (
        schedules.c.name,
        schedules.c.job,
        schedules.c.cron,
        schedules.c.stack,
        schedules.c.environment,
    )
    titled = exists(
        select(jobs.c.id).where(
            jobs.c.tenant == schedules.c.tenant,
            jobs.c.stack == schedules.c.stack,
            jobs.c.name == schedules.c.job,
            jobs.c.title.icontains(text, autoescape=True),
        )
    )
    return or_(
        *(column.icontains(text, autoescape=True) for column in columns),
        titled,
        label_index.value_contains(text),
    )
