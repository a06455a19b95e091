"""A listing's filters as SQL on `schedules` joined to `schedule_state`.

`listing(conn, tenant, query, after=, limit=)` is the SELECT of what
`store.schedules.list_page` pages through and what an action by selector reads
whole (`list_all`): one definition of "the rows this query names".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, case, exists, func, not_, or_, select, tuple_, union_all
from sqlalchemy.sql import ColumnElement, Select

from cronplane.core.queries import ScheduleQuery
from cronplane.core.selectors import Requirement, Selector
from cronplane.store import dialects, key_sets, label_index
from cronplane.store.tables import (
    SCHEDULE_COLUMNS,
    SCHEDULE_ROWS,
    jobs,
    schedule_key_sets,
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
    the page's rows are read from `schedules`). A negative term's complement, the
    ranges that hold what it selects (store.key_sets), merged, is walked instead
    when it is the smaller (`_walked_complement`).
    """
    selector = filters.selection()
    if selector:
        # PostgreSQL would start workers for a page of a few hundred index entries.
        dialects.of(conn).serial(conn)
    walk = label_index.driver(conn, tenant, selector) if selector else None
    fixed = filters.stack is not None and filters.environment is not None
    found_by = _walked_complement(conn, tenant, filters, walk, after, fixed)
    if found_by is not None:
        branches = _complement(tenant, found_by)
        return _merged(tenant, filters, found_by.term, branches, after, limit, fixed)
    if walk is None:
        order: Order = (schedules.c.name, schedules.c.stack, schedules.c.environment)
        found = conditions(tenant, filters) + _after(order, after, fixed)
        return _page(select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS), found, order, limit)
    merged = len(walk.ranges) > 1
    if merged and limit is not None and _labels_and_scope_only(filters):
        branches = []
        for branch in walk.ranges:
            walked = schedule_labels.alias()
            branches.append((walked, label_index.range_of(walked, tenant, branch)))
        return _merged(tenant, filters, walk.term, branches, after, limit, fixed)
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


def _walked_complement(
    conn: Connection,
    tenant: str,
    filters: ScheduleQuery,
    walk: label_index.Walk | None,
    after: Keyset | None,
    fixed: bool,
) -> key_sets.Complement | None:
    """The complement of a negative term a page walks instead (store.key_sets), or None.

    Negative terms only: when the walk by name would not find the rows often. With
    positive terms too, when their walk is not bounded (every walkable range is past
    label_index.COUNT_CAP, or none is walkable), rarely finds the rows (a sample of
    its first entries: `finds_often`), and the complement holds fewer entries than
    that cap (`env=prod,!team`: the few rows without a team, probed for env=prod,
    not half a million env=prod entries probed for a team). The complement's walk
    reads at most its counted entries; the positive one's is bounded by nothing.
    """
    selector = filters.selection()
    if key_sets.negative_only(selector):  # no positive term: `walk` is None
        if _often(conn, tenant, filters, after, fixed):
            return None
        return key_sets.complement(conn, tenant, selector)
    if walk is not None and (
        walk.entries < label_index.COUNT_CAP
        or label_index.finds_often(conn, tenant, selector, walk)
    ):
        return None
    found_by = key_sets.complement(conn, tenant, selector, count=True)
    return found_by if found_by is not None and found_by.entries < key_sets.COUNT_CAP else None


def _often(
    conn: Connection, tenant: str, filters: ScheduleQuery, after: Keyset | None, fixed: bool
) -> bool:
    """Whether the walk by name finds the selector's rows often enough: one in
    key_sets.OFTEN of the first label_index.SAMPLE rows after `after`, or those are
    all the rows left (then a page reads about OFTEN × its rows, as cheap as a merge
    of ranges, which has a plan to read first)."""
    order: Order = (schedules.c.name, schedules.c.stack, schedules.c.environment)
    rows = schedules if _labels_and_scope_only(filters) else SCHEDULE_ROWS
    found = conditions(tenant, filters, with_selector=False) + _after(order, after, fixed)
    query = select(schedules.c.id).select_from(rows).where(*found).order_by(*order)
    first = query.limit(label_index.SAMPLE).subquery()
    held = and_(*label_index.selected(tenant, filters.selection(), ids=first.c.id))
    sampled = select(func.count(), func.coalesce(func.sum(case((held, 1), else_=0)), 0))
    walked, hits = conn.execute(sampled.select_from(first)).one()
    return bool(walked < label_index.SAMPLE or hits * key_sets.OFTEN >= walked)


Branch = tuple[Any, list[ColumnElement[bool]]]  # an index alias, and its range on it


def _complement(tenant: str, found_by: key_sets.Complement) -> list[Branch]:
    """The ranges of what a negative term selects: the rows of each set without its key,
    of the sets written since (probed for the key), and the key's other values."""
    branches: list[Branch] = []
    for key_set in found_by.lacking:
        walked = schedule_key_sets.alias()
        branches.append((walked, key_sets.of_set(walked, tenant, key_set)))
    walked = schedule_key_sets.alias()
    lacks = Selector((Requirement(found_by.term.key, "!"),))
    newer = key_sets.newer_sets(walked, tenant, found_by.known)
    branches.append((walked, newer + label_index.selected(tenant, lacks, ids=walked.c.schedule_id)))
    for low, high in found_by.gaps:
        walked = schedule_labels.alias()
        branches.append((walked, key_sets.gap(walked, tenant, found_by.term.key, low, high)))
    return branches


def _merged(
    tenant: str,
    filters: ScheduleQuery,
    term: Requirement,
    branches: list[Branch],
    after: Keyset | None,
    limit: int | None,
    fixed: bool,
) -> Select[Any]:
    """A page of index ranges that together hold exactly what `term` selects: each range
    in the listing's order (or small enough to sort) yields at most `limit` entries, and
    the page is the first `limit` of their union (a sort of at most `limit` × ranges)."""
    selector = filters.selection()
    pages = []
    for walked, ranged in branches:
        order: Order = (walked.c.name, walked.c.stack, walked.c.environment)
        found = ranged + label_index.selected(tenant, selector, but=term, ids=walked.c.schedule_id)
        rows = walked
        if _labels_and_scope_only(filters):
            found += _scoped(walked, filters)
        else:
            rows = walked.join(SCHEDULE_ROWS, schedules.c.id == walked.c.schedule_id)
            found += conditions(tenant, filters, with_selector=False)
        query = select(walked.c.schedule_id, *order).select_from(rows)
        pages.append(_page(query, found + _after(order, after, fixed), order, limit))
    inner = union_all(*(page.subquery().select() for page in pages)).subquery()
    by: Order = (inner.c.name, inner.c.stack, inner.c.environment)
    rows = SCHEDULE_ROWS.join(inner, inner.c.schedule_id == schedules.c.id)
    return _page(select(*SCHEDULE_COLUMNS).select_from(rows), [], by, limit)


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
