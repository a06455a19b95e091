"""The label index's writes and the selector's SQL (issue 37; tables.labels says why).

    index(conn, [row values, ...])                    pairs of new rows
    reindex(conn, schedule_id, labels)                a row whose labels changed
    forget(conn, ids)                                 rows deleted
    selected(tenant, selector) -> [condition, ...]    a selector as SQL on `schedules`
    driver(conn, tenant, selector) -> Requirement?    the term a listing page walks
    value_contains(text) -> condition                 search over label values

store.schedules calls the first three from each statement that writes
`schedules.labels` (insert, update, delete), so the index never lags the
column (tests/store/test_label_index.py writes through every path and
compares); they write each row's key set too (store.key_sets: what a selector
of negative terms only walks). Each requirement is an EXISTS or NOT EXISTS on the index, a
probe of the key per row. A listing page walks, instead of `schedules` by
name, the index range of its rarest single-value term (`driver`): that range
is in the listing's order already, so the page is its first matching entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from sqlalchemy import Connection, delete, exists, func, select
from sqlalchemy.sql import ColumnElement

from cronplane.core.selectors import Requirement, Selector
from cronplane.store import key_sets
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.tables import schedule_key_sets, schedule_labels, schedules

_CHUNK: Final = 500  # ids per IN list: under SQLite's bound-parameter limit
# A driver's range is counted up to this many entries (an index-only scan): a range
# under it is small enough to sort on the index alone; never a count of a million.
COUNT_CAP: Final = 16384
# An `in` term of at most this many values can be walked in order (one range each).
MAX_BRANCHES: Final = 8
# Entries of each candidate range a selector of common terms samples to choose its walk.
SAMPLE: Final = 64
_KEYED: Final = ("tenant", "name", "stack", "environment")


def index(conn: Connection, rows: Iterable[Mapping[str, Any]]) -> None:
    """Index the labels and the key set of new schedules, given as column values (a bulk
    statement per table)."""
    rows = list(rows)
    pairs = [
        {
            "schedule_id": row["id"],
            **{column: row[column] for column in _KEYED},
            "key": key,
            "value": value,
        }
        for row in rows
        for key, value in (row.get("labels") or {}).items()
    ]
    insert_dicts(conn, schedule_labels, pairs)
    key_sets.index(conn, rows)


def forget(conn: Connection, ids: Iterable[UUID]) -> None:
    """Drop the index rows and the key sets of these schedules."""
    ids = list(ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        for table in (schedule_labels, schedule_key_sets):
            conn.execute(delete(table).where(table.c.schedule_id.in_(chunk)))


def reindex(conn: Connection, schedule_id: UUID, labels: Mapping[str, str]) -> None:
    """Replace one schedule's index rows with `labels` (its key read from the row)."""
    forget(conn, [schedule_id])
    keyed = conn.execute(
        select(*(schedules.c[column] for column in _KEYED)).where(schedules.c.id == schedule_id)
    ).first()
    if keyed is not None:
        index(conn, [{"id": schedule_id, **keyed._mapping, "labels": labels}])


def _term(tenant: str, requirement: Requirement, ids: Any) -> ColumnElement[bool]:
    found = select(schedule_labels.c.schedule_id).where(
        schedule_labels.c.tenant == tenant,
        schedule_labels.c.key == requirement.key,
        schedule_labels.c.schedule_id == ids,
    )
    if requirement.op in ("=", "!="):
        found = found.where(schedule_labels.c.value == requirement.values[0])
    elif requirement.op in ("in", "notin"):
        found = found.where(schedule_labels.c.value.in_(requirement.values))
    present = exists(found)
    return present if requirement.op in ("=", "in", "exists") else ~present


def selected(
    tenant: str, selector: Selector, *, but: Requirement | None = None, ids: Any = None
) -> list[ColumnElement[bool]]:
    """Conditions on `schedules` (all must hold) that keep the rows `selector` selects
    (`but`: a term the caller holds otherwise, as a page's driver; `ids`: the schedule
    id column to probe by, `schedules.id` unless a walked index range has it)."""
    ids = schedules.c.id if ids is None else ids
    return [_term(tenant, term, ids) for term in selector.requirements if term != but]


@dataclass(frozen=True, slots=True)
class Walk:
    """What a listing page reads of the index for `term`: `ranges`, one or more index
    ranges that together hold exactly its entries, each in the listing's order when
    `ordered` (one value each: merged when several), else one range small enough to
    sort; `entries`: the term's count, capped at COUNT_CAP (what the walk may read)."""

    term: Requirement
    ordered: bool
    ranges: tuple[Requirement, ...]
    entries: int


def range_of(walked: Any, tenant: str, term: Requirement) -> list[ColumnElement[bool]]:
    """Conditions on an alias of schedule_labels: the index range of a positive term."""
    found = [walked.c.tenant == tenant, walked.c.key == term.key]
    if term.op != "exists":
        found.append(walked.c.value.in_(term.values))
    return found


def _single(term: Requirement) -> bool:
    return term.op != "exists" and len(term.values) == 1


def driver(conn: Connection, tenant: str, selector: Selector) -> Walk | None:
    """What a page of `selector` walks, from one statement that counts each positive
    term's range up to COUNT_CAP (an index-only scan) and reads the least and the
    greatest value of a key-only term's (two index seeks):

    - the term with the fewest rows, when under the cap: sorted, or in order when
      it has one value (a key-only term whose entries all hold one value counts);
    - else the walkable term (one value, or an `in` of at most MAX_BRANCHES values,
      merged) under which the other terms hold most often, measured on the first
      SAMPLE entries of each (`_best`): the fewest entries walked per row shown;
    - else None: the page walks `schedules` by name.
    """
    terms = [term for term in selector.requirements if term.op in ("=", "in", "exists")]
    if not terms:
        return None
    keyed = [term for term in terms if term.op == "exists"]
    counts = [_capped_count(tenant, term) for term in terms]
    ends = [
        select(bound(schedule_labels.c.value))
        .where(*range_of(schedule_labels, tenant, term))
        .scalar_subquery()
        for term in keyed
        for bound in (func.min, func.max)
    ]
    got = conn.execute(select(*counts, *ends)).one()
    counted = list(zip(got[: len(terms)], terms, strict=True))
    # A key-only term whose least and greatest value are one: the value all its entries hold.
    one_valued = {
        term: str(got[len(terms) + 2 * index])
        for index, term in enumerate(keyed)
        if got[len(terms) + 2 * index] == got[len(terms) + 2 * index + 1]
        and got[len(terms) + 2 * index] is not None
    }
    fewest, term = min(counted, key=lambda pair: pair[0])
    if fewest < COUNT_CAP:
        if _single(term) or term in one_valued:
            return _ordered(term, one_valued, fewest)
        return Walk(term, ordered=False, ranges=(term,), entries=fewest)
    walkable = [
        term
        for term in terms
        if _single(term)
        or term in one_valued
        or (term.op == "in" and len(term.values) <= MAX_BRANCHES)
    ]
    if not walkable:
        return None
    chosen = _best(conn, tenant, selector, walkable) if len(walkable) > 1 else walkable[0]
    return _ordered(chosen, one_valued, COUNT_CAP)


def _ordered(term: Requirement, one_valued: dict[Requirement, str], entries: int) -> Walk:
    """`term` walked as ranges of one value each: a key-only term whose entries all hold
    one value as `key = value` (the index's order is the listing's only within one
    value), an `in` one range per value."""
    if term in one_valued:
        only = Requirement(term.key, "=", (one_valued[term],))
        return Walk(term, ordered=True, ranges=(only,), entries=entries)
    ranges = tuple(Requirement(term.key, "=", (value,)) for value in term.values)
    return Walk(term, ordered=True, ranges=ranges, entries=entries)


def _capped_count(tenant: str, term: Requirement) -> Any:
    return (
        select(func.count())
        .select_from(
            select(schedule_labels.c.name)
            .where(*range_of(schedule_labels, tenant, term))
            .limit(COUNT_CAP)
            .subquery()
        )
        .scalar_subquery()
    )


def _best(
    conn: Connection, tenant: str, selector: Selector, walkable: list[Requirement]
) -> Requirement:
    """The walkable term whose first SAMPLE entries most often satisfy the other terms.

    Counts alone cannot choose between terms that all reach the cap, and the walk's
    cost is the entries it reads per row it shows: 1 / P(the others | this term).
    A sample of the walk itself measures that, correlations included, in one
    statement of at most SAMPLE probes per other term and candidate.
    """
    hits = [_hits(tenant, selector, term, term) for term in walkable]
    counted = conn.execute(select(*hits)).one()
    return max(zip(counted, walkable, strict=True), key=lambda pair: pair[0])[1]


def finds_often(conn: Connection, tenant: str, selector: Selector, walk: Walk) -> bool:
    """Whether at least one in key_sets.OFTEN of the first SAMPLE entries of `walk`'s
    first range satisfy the selector's other terms (one statement of at most SAMPLE
    probes each): then a page reads about OFTEN entries per row it shows."""
    sampled = _hits(tenant, selector, walk.term, walk.ranges[0])
    return bool(conn.execute(select(sampled)).scalar_one() * key_sets.OFTEN >= SAMPLE)


def _hits(tenant: str, selector: Selector, term: Requirement, ranged: Requirement) -> Any:
    """How many of the first SAMPLE entries of `ranged`'s range (of `term`, or `term`
    itself) satisfy the other terms: of one value, the index yields them in order."""
    sample = schedule_labels.alias()
    first = (
        select(sample.c.schedule_id)
        .where(*range_of(sample, tenant, ranged))
        .order_by(sample.c.value, sample.c.name, sample.c.stack, sample.c.environment)
        .limit(SAMPLE)
        .subquery()
    )
    held = selected(tenant, selector, but=term, ids=first.c.schedule_id)
    return select(func.count()).select_from(first).where(*held).scalar_subquery()


def value_contains(text: str) -> ColumnElement[bool]:
    """Rows with a label value containing `text` (any case; `%` and `_` match themselves)."""
    return exists(
        select(schedule_labels.c.schedule_id).where(
            schedule_labels.c.schedule_id == schedules.c.id,
            schedule_labels.c.value.icontains(text, autoescape=True),
        )
    )
