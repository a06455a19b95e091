"""Each schedule's set of label keys (issue 37): how a page of negative terms is walked.

The label index (store.label_index) holds the labels a row has, so a term that
holds where a label is missing (`!team`, `tier!=batch`, `team notin (a,b)`) is
a NOT EXISTS probe per row: a selector of such terms only walked the tenant by
name, and over rows it mostly excludes (`!team` when nearly every row has a
team) read the whole tenant before it could tell the page was the last.

So each schedule also has one row naming the set of its label keys by a digest
(`schedule_key_sets`, with the listing key), and each tenant's sets are listed
with their keys (`label_key_sets`: written when first seen, never deleted). The
rows without `team` are the rows of the sets without it: a few index ranges,
each in the listing's order. A negative term selects those, and for `k!=v` or
`k notin (…)` the label index's ranges of k's other values (`gaps`).

    index(conn, rows)                                  a key set per new row (store.label_index)
    complement(conn, tenant, selector) -> Complement?  what a negative-only page walks
    of_set / newer_sets / gap                          its ranges, as conditions on an alias

A Complement stays exact whatever is written after it is read: its sets are all
the tenant had then, a set written since is one more range (`newer_sets`,
normally empty), and a gap is a range of values, not a list of the values seen.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from sqlalchemy import Connection, func, literal, select, union_all
from sqlalchemy.sql import ColumnElement

from cronplane.core.selectors import Requirement, Selector
from cronplane.store import dialects
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.tables import label_key_sets, schedule_key_sets, schedule_labels

# Sets of one tenant a plan reads: past this many (keys that keep changing), the walk by name.
MAX_SETS: Final = 128
# Sets without the key a page walks, one ordered range each, merged.
MAX_BRANCHES: Final = 8
# The other values' entries (the gaps) are sorted for a page: at most this many.
COUNT_CAP: Final = 16384
# A selector whose rows are one in OFTEN of those walked by name is walked by name.
OFTEN: Final = 8
NEGATIVE: Final = ("!", "!=", "notin")
_KEYED: Final = ("tenant", "name", "stack", "environment")
Part = Literal["gaps", "sets"]  # of a complement: its value ranges, or its sets' rows


def digest(keys: Iterable[str]) -> tuple[str, str]:
    """A set of label keys as (its digest, its keys sorted and comma-separated)."""
    text = ",".join(sorted(keys))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest(), text


def index(conn: Connection, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write the key set of each new schedule (column values, labels included), and list
    a set its tenant had not had."""
    sets: dict[tuple[str, str], str] = {}
    entries = []
    for row in rows:
        key_set, keys = digest(row.get("labels") or {})
        sets[(row["tenant"], key_set)] = keys
        entries.append(
            {"schedule_id": row["id"], "key_set": key_set, **{c: row[c] for c in _KEYED}}
        )
    if sets:
        # In one order: two writers of the same new sets wait for each other, not in a cycle.
        listed = [{"tenant": t, "key_set": k, "key_list": sets[t, k]} for t, k in sorted(sets)]
        insert = dialects.of(conn).insert(label_key_sets)
        conn.execute(insert.on_conflict_do_nothing(index_elements=["tenant", "key_set"]), listed)
    insert_dicts(conn, schedule_key_sets, entries)


@dataclass(frozen=True, slots=True)
class Complement:
    """Ranges that together hold exactly the rows of a tenant `term` selects, less rows
    the selector's other terms refuse by their key alone: the rows of each set without
    its key (`lacking`, each in the listing's order), of any set not in `known` that
    lacks the key (`newer_sets`), and the key's entries in each of `gaps` (ranges of
    values between the term's own, lowest first: `k!=v`, `k notin (…)`). `entries`:
    how many they hold, capped at COUNT_CAP (0 when not counted)."""

    term: Requirement
    lacking: tuple[str, ...]
    known: tuple[str, ...]
    gaps: tuple[tuple[str | None, str | None], ...]
    entries: int = 0


def complement(
    conn: Connection, tenant: str, selector: Selector, *, count: bool = False
) -> Complement | None:
    """What a page of `selector` may walk instead of a positive term's range or the
    tenant by name: the complement of one of its negative terms, or None when none is
    small enough in ranges.

    One statement reads the tenant's sets (at most MAX_SETS); a set is kept when it
    has every key a positive term needs and none a `!k` term refuses (a set's keys
    never change, so that is exact). A term is walkable when at most MAX_BRANCHES of
    the kept sets lack its key and its gaps hold under COUNT_CAP entries (one
    statement counts them, up to the cap, when it has gaps). Of several, the one
    whose ranges hold fewest entries (one more statement, also run when `count`
    asks for the chosen one's): the fewest walked per row shown.
    """
    if not any(term.op in NEGATIVE for term in selector.requirements):
        return None
    found = conn.execute(
        select(label_key_sets.c.key_set, label_key_sets.c.key_list)
        .where(label_key_sets.c.tenant == tenant)
        .limit(MAX_SETS + 1)
    ).all()
    if len(found) > MAX_SETS:
        return None
    known = tuple(key_set for key_set, _ in found)
    needed = {term.key for term in selector.requirements if term.op not in NEGATIVE}
    refused = {term.key for term in selector.requirements if term.op == "!"}
    kept = [
        (key_set, keys)
        for key_set, keys in ((key_set, set(listed.split(","))) for key_set, listed in found)
        if needed <= keys and not refused & keys
    ]
    candidates = []
    for term in selector.requirements:
        if term.op not in NEGATIVE:
            continue
        lacking = tuple(key_set for key_set, keys in kept if term.key not in keys)
        if len(lacking) <= MAX_BRANCHES:
            candidates.append(Complement(term, lacking, known, _gaps(conn, term)))
    # The gaps are sorted for a page: they must be small. The sets count only to choose.
    gaps = _counted(conn, tenant, [c for c in candidates if c.gaps], "gaps")
    walkable = [c for c in candidates if gaps.get(c, 0) < COUNT_CAP]
    if not walkable or (len(walkable) == 1 and not count):
        return walkable[0] if walkable else None
    sets = _counted(conn, tenant, walkable, "sets")
    chosen = min(walkable, key=lambda c: gaps.get(c, 0) + sets[c])
    return replace(chosen, entries=min(COUNT_CAP, gaps.get(chosen, 0) + sets[chosen]))


def _counted(
    conn: Connection, tenant: str, candidates: Sequence[Complement], part: Part
) -> dict[Complement, int]:
    """Each candidate's entries in its gaps, or in its sets without the key, counted up to
    COUNT_CAP in one statement (index-only scans that stop there); none asked, none run."""
    if not candidates:
        return {}
    got = conn.execute(select(*(_count(tenant, c, part) for c in candidates))).one()
    return dict(zip(candidates, got, strict=True))


def negative_only(selector: Selector) -> bool:
    """Whether `selector` has terms, all of them negative (they hold where a key is missing)."""
    return bool(selector) and all(term.op in NEGATIVE for term in selector.requirements)


def _gaps(conn: Connection, term: Requirement) -> tuple[tuple[str | None, str | None], ...]:
    """The ranges of values between `term`'s own, in the database's order of text (its
    collation may not be Python's: the values are sorted by it when there are two)."""
    if term.op == "!":
        return ()
    values: Sequence[str] = term.values
    if len(values) > 1:
        listed = union_all(*(select(literal(value).label("v")) for value in values)).subquery()
        values = conn.execute(select(listed.c.v).order_by(listed.c.v)).scalars().all()
    bounds = (None, *values, None)
    return tuple(itertools.pairwise(bounds))


def _count(tenant: str, candidate: Complement, part: Part) -> Any:
    """The entries of a candidate's gaps, or of its sets without the key, counted up to
    COUNT_CAP: index-only scans that stop there."""
    ranges = []
    if part == "gaps":
        for low, high in candidate.gaps:
            walked = schedule_labels.alias()
            found = gap(walked, tenant, candidate.term.key, low, high)
            ranges.append(select(walked.c.name).where(*found))
    for key_set in candidate.lacking if part == "sets" else ():
        walked = schedule_key_sets.alias()
        ranges.append(select(walked.c.name).where(*of_set(walked, tenant, key_set)))
    if not ranges:
        return literal(0)
    capped = union_all(*ranges).limit(COUNT_CAP).subquery()
    return select(func.count()).select_from(capped).scalar_subquery()


def of_set(walked: Any, tenant: str, key_set: str) -> list[ColumnElement[bool]]:
    """Conditions on an alias of schedule_key_sets: the rows of one set, in the listing's order."""
    return [walked.c.tenant == tenant, walked.c.key_set == key_set]


def newer_sets(walked: Any, tenant: str, known: Sequence[str]) -> list[ColumnElement[bool]]:
    """Conditions on an alias of schedule_key_sets: the rows of the tenant's sets not in
    `known` (written after the plan read them; the caller probes them for the key)."""
    newer = select(label_key_sets.c.key_set).where(
        label_key_sets.c.tenant == tenant, label_key_sets.c.key_set.not_in(known)
    )
    return [walked.c.tenant == tenant, walked.c.key_set.in_(newer)]


def gap(
    walked: Any, tenant: str, key: str, low: str | None, high: str | None
) -> list[ColumnElement[bool]]:
    """Conditions on an alias of schedule_labels: the entries of `key` with a value
    strictly between `low` and `high` (None: unbounded)."""
    found = [walked.c.tenant == tenant, walked.c.key == key]
    if low is not None:
        found.append(walked.c.value > low)
    if high is not None:
        found.append(walked.c.value < high)
    return found
