"""A listing's filters as SQL on `schedules` joined to `schedule_state`.

`conditions(tenant, query)` is what an action by selector reads whole and,
through `listing`, what `store.schedules.list_page` pages through: one
definition of "the rows this query names".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, exists, or_, select
from sqlalchemy.sql import ColumnElement, FromClause

from cronplane.core.queries import ScheduleQuery
from cronplane.core.selectors import Requirement
from cronplane.store import dialects, label_index
from cronplane.store.tables import SCHEDULE_ROWS, jobs, schedule_labels, schedule_state, schedules

Order = tuple[Any, Any, Any]  # the columns a listing is ordered by: name, stack, environment


def listing(
    conn: Connection, tenant: str, filters: ScheduleQuery
) -> tuple[FromClause, list[ColumnElement[bool]], Order]:
    """What a page of `filters` reads: (the rows to select from, the conditions, the
    three order columns). With a selector, the rows are joined to the index range
    of the term label_index.driver chooses and ordered by its copy of the listing
    key: for one value the index yields that order, for a small range it is sorted."""
    selector = filters.selection()
    if selector:
        # PostgreSQL would start workers for a page of a few hundred index entries.
        dialects.of(conn).serial(conn)
    walk = label_index.driver(conn, tenant, selector) if selector else None
    if walk is None:
        order = (schedules.c.name, schedules.c.stack, schedules.c.environment)
        return SCHEDULE_ROWS, conditions(tenant, filters), order
    walked = schedule_labels.alias("walked")
    # The other terms probe by the walked entry's id: no schedule row read until they hold.
    found = conditions(tenant, filters, but=walk.term, ids=walked.c.schedule_id)
    found += label_index.range_of(walked, tenant, walk.term)
    rows = SCHEDULE_ROWS.join(walked, walked.c.schedule_id == schedules.c.id)
    # The index's copy of the key, even when its range is not in that order (a small
    # one, sorted): ordered by `schedules.name`, a planner walks that index instead.
    return rows, found, (walked.c.name, walked.c.stack, walked.c.environment)


def conditions(
    tenant: str, filters: ScheduleQuery, *, but: Requirement | None = None, ids: Any = None
) -> list[ColumnElement[bool]]:
    """The WHERE terms (all must hold) of the rows `filters` names in `tenant` (`but`: a
    selector term the caller holds by a join; `ids`: the id column its probes use)."""
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
    found.extend(label_index.selected(tenant, filters.selection(), but=but, ids=ids))
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
