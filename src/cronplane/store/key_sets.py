"""Each schedule's set of label keys (issue 37): what a page of negative terms can walk.

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

    index(conn, rows)     a key set per new row (store.label_index's writes call it)
    digest(keys)          a set's digest and its keys as text
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

from sqlalchemy import Connection

from cronplane.store import dialects
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.tables import label_key_sets, schedule_key_sets

_KEYED: Final = ("tenant", "name", "stack", "environment")


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
