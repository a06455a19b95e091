"""The schedules table: row mapping and the statements the service runs.

A schedule is two rows, one in `schedules` and its state (enabled, next_run,
last_run, run_count) in `schedule_state` (store.tables says why); every
statement here reads them joined and writes each value where it lives, so
callers see one row.

Inserts use ON CONFLICT DO NOTHING on both dialects: a duplicate key is an
answer (None / not in the returned ids), not an exception, so a PostgreSQL
transaction is never aborted by a race on the unique key and a concurrent
sync can treat it as idempotent.

Every write of a definition (an insert, an update that moves the revision on,
a payload set, a delete) takes the `Change` that made it and writes the
row's version in the same transaction (store.versions): no path can skip it.
Only `insert_rows`, for tools and tests that write rows directly, writes none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Row, delete, select, update
from sqlalchemy.sql import Select

from cronplane.core.codec import field_names
from cronplane.core.model import Schedule
from cronplane.core.queries import ScheduleQuery
from cronplane.core.versions import Change
from cronplane.store import dialects, label_index, schedule_filters, versions
from cronplane.store.tables import (
    SCHEDULE_COLUMNS,
    SCHEDULE_ROWS,
    STATE_FIELDS,
    schedule_state,
    schedules,
)

# PostgreSQL channel the dispatcher LISTENs on to wake early when schedules change.
NOTIFY_CHANNEL = "cronplane_schedules"


# Columns whose stored value differs from the record's (everything else maps by name).
_FROM_COLUMN: dict[str, Callable[[Any], Any]] = {
    "payload": lambda value: dict(value or {}),
    "enabled": bool,
    "declared": lambda value: None if value is None else dict(value),
    "overrides": lambda value: tuple(sorted(value or ())),
}
_TO_COLUMN: dict[str, Callable[[Any], Any]] = {"overrides": list}
_FIELDS = field_names(Schedule)


def schedule_from_row(row: Row[Any]) -> Schedule:
    """Map a row of `_rows()` to the frozen Schedule (columns named as its fields)."""
    m = row._mapping
    return Schedule(
        **{
            name: _FROM_COLUMN[name](m[name]) if name in _FROM_COLUMN else m[name]
            for name in _FIELDS
        }
    )


def schedule_values(schedule: Schedule) -> dict[str, Any]:
    """The column values of a Schedule, for inserts."""
    values = {name: getattr(schedule, name) for name in _FIELDS}
    for name, convert in _TO_COLUMN.items():
        values[name] = convert(values[name])
    return values


def _rows() -> Select[Any]:
    """SELECT of whole schedules (both tables joined), for `schedule_from_row`."""
    return select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS)


def split_values(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Column values of a schedule as (those of `schedules`, those of `schedule_state`)."""
    state = {name: value for name, value in values.items() if name in STATE_FIELDS}
    return {name: value for name, value in values.items() if name not in state}, state


def _state_rows(split: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """schedule_state rows of split values: the schedule's id and tenant, then its state."""
    return [{"id": main["id"], "tenant": main["tenant"], **state} for main, state in split]


def insert_rows(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert schedules given as column values of both tables (plain INSERTs: a
    duplicate raises). For tools and tests that write rows directly."""
    if rows:
        split = [split_values(row) for row in rows]
        conn.execute(schedules.insert(), [main for main, _state in split])
        conn.execute(schedule_state.insert(), _state_rows(split))
        label_index.index(conn, rows)


def _insert(conn: Connection) -> Any:
    return (
        dialects.of(conn)
        .insert(schedules)
        .on_conflict_do_nothing(index_elements=["tenant", "stack", "environment", "name"])
    )


def insert_schedules(conn: Connection, rows: Sequence[Schedule], *, change: Change) -> set[UUID]:
    """Insert many, each with its version; returns the ids actually inserted (duplicates
    on the key are skipped)."""
    if not rows:
        return set()
    split = [split_values(schedule_values(row)) for row in rows]
    result = conn.execute(_insert(conn).returning(schedules.c.id), [main for main, _ in split])
    inserted = set(result.scalars().all())
    # Only the inserted rows get a state: a skipped duplicate keeps its own.
    states = _state_rows(pair for pair in split if pair[0]["id"] in inserted)
    if states:
        conn.execute(schedule_state.insert(), states)
    label_index.index(conn, (main for main, _ in split if main["id"] in inserted))
    versions.record(conn, [row for row in rows if row.id in inserted], change)
    return inserted


def insert_schedule(conn: Connection, schedule: Schedule, *, change: Change) -> bool:
    """Insert one; False when a row with the same key already exists."""
    return bool(insert_schedules(conn, [schedule], change=change))


def notify_changed(conn: Connection) -> None:
    """Wake LISTENing dispatchers at commit (PostgreSQL); nothing on SQLite."""
    dialects.of(conn).notify(conn, NOTIFY_CHANNEL)


def get_by_key(
    conn: Connection,
    tenant: str,
    stack: str,
    environment: str,
    name: str,
    *,
    for_update: bool = False,
) -> Schedule | None:
    """The schedule with this key, or None; `for_update` locks it (PostgreSQL)."""
    query = _rows().where(
        schedules.c.tenant == tenant,
        schedules.c.stack == stack,
        schedules.c.environment == environment,
        schedules.c.name == name,
    )
    if for_update:
        # Both rows (FOR UPDATE of a join locks each table's row).
        query = query.with_for_update()
    row = conn.execute(query).first()
    return None if row is None else schedule_from_row(row)


def get_by_id(
    conn: Connection, tenant: str, schedule_id: UUID, *, for_update: bool = False
) -> Schedule | None:
    """The schedule with this id in the tenant, or None."""
    query = _rows().where(schedules.c.tenant == tenant, schedules.c.id == schedule_id)
    if for_update:
        # Both rows (FOR UPDATE of a join locks each table's row).
        query = query.with_for_update()
    row = conn.execute(query).first()
    return None if row is None else schedule_from_row(row)


def by_ids(conn: Connection, ids: Sequence[UUID]) -> list[Schedule]:
    """The schedules with these ids (any tenant: the fire transaction's, which holds
    their locks), in no particular order; an id not found is left out."""
    if not ids:
        return []
    return [schedule_from_row(row) for row in conn.execute(_rows().where(schedules.c.id.in_(ids)))]


def in_scope(conn: Connection, tenant: str, stack: str, environment: str) -> list[Schedule]:
    """Every row of one (tenant, stack, environment), by name (what sync compares)."""
    query = (
        _rows()
        .where(
            schedules.c.tenant == tenant,
            schedules.c.stack == stack,
            schedules.c.environment == environment,
        )
        .order_by(schedules.c.name)
    )
    return [schedule_from_row(row) for row in conn.execute(query)]


@dataclass(frozen=True, slots=True)
class SyncHead:
    """The few columns sync needs of every row in a scope (no payload, no datetimes)."""

    id: UUID
    name: str
    source: str
    revision: int
    declared: dict[str, Any] | None
    overrides: tuple[str, ...]


def heads_in_scope(conn: Connection, tenant: str, stack: str, environment: str) -> list[SyncHead]:
    """Narrow rows of one scope: a repeated sync of 10,000 crons decodes little."""
    query = select(
        schedules.c.id,
        schedules.c.name,
        schedules.c.source,
        schedules.c.revision,
        schedules.c.declared,
        schedules.c.overrides,
    ).where(
        schedules.c.tenant == tenant,
        schedules.c.stack == stack,
        schedules.c.environment == environment,
    )
    return [
        SyncHead(
            row.id,
            row.name,
            row.source,
            row.revision,
            row.declared,
            tuple(sorted(row.overrides or ())),
        )
        for row in conn.execute(query)
    ]


def by_names(
    conn: Connection, tenant: str, stack: str, environment: str, names: Iterable[str]
) -> list[Schedule]:
    """Full rows of one scope with these names."""
    names = sorted(names)
    found: list[Schedule] = []
    # Chunks keep the IN list under SQLite's bound-parameter limit.
    for start in range(0, len(names), 500):
        query = _rows().where(
            schedules.c.tenant == tenant,
            schedules.c.stack == stack,
            schedules.c.environment == environment,
            schedules.c.name.in_(names[start : start + 500]),
        )
        found.extend(schedule_from_row(row) for row in conn.execute(query))
    return found


def list_page(
    conn: Connection,
    tenant: str,
    filters: ScheduleQuery,
    *,
    after: tuple[str, str, str] | None = None,
    limit: int = 100,
) -> list[Schedule]:
    """Rows ordered by (name, stack, environment), starting after the keyset `after`.

    The order is unique within a tenant. With stack and environment fixed the
    unique key's index yields it directly; a selector's page walks a label
    index range in the same order (store.schedule_filters.listing).
    """
    query = schedule_filters.listing(conn, tenant, filters, after=after, limit=limit)
    return [schedule_from_row(row) for row in conn.execute(query)]


def list_all(conn: Connection, tenant: str, filters: ScheduleQuery) -> list[Schedule]:
    """Every row `filters` names, not a page, by (name, stack, environment): what an
    action by selector acts on (`cursor` and `limit` are not read)."""
    query = schedule_filters.listing(conn, tenant, filters)
    return [schedule_from_row(row) for row in conn.execute(query)]


def update_schedule(
    conn: Connection,
    schedule_id: UUID,
    values: Mapping[str, Any],
    *,
    expected_revision: int | None = None,
    change: Change | None = None,
) -> bool:
    """Set `values` on one schedule; False when it is gone or its revision moved on.

    Each value goes to its table, in the caller's transaction: `schedules`
    first (the revision's check), then the state, so a False writes nothing.
    Values that move the revision on are a definition change: `change` is
    required and the row's new version is written.
    """
    if "revision" in values and change is None:
        raise ValueError("a definition change needs its Change (store.versions)")
    main, state = split_values(values)
    if main or expected_revision is not None:
        query = update(schedules).where(schedules.c.id == schedule_id)
        if expected_revision is not None:
            query = query.where(schedules.c.revision == expected_revision)
        # Only the check (no column of `schedules` set): still a row lock on PostgreSQL.
        query = query.values(**main) if main else query.values(revision=schedules.c.revision)
        if conn.execute(query).rowcount != 1:
            return False
        if "labels" in main:
            label_index.reindex(conn, schedule_id, main["labels"])
    if state:
        query = update(schedule_state).where(schedule_state.c.id == schedule_id).values(**state)
        if conn.execute(query).rowcount != 1:
            return False
    if change is not None:
        _record(conn, [schedule_id], change)
    return True


def _record(
    conn: Connection, ids: Sequence[UUID], change: Change, *, removed: bool = False
) -> None:
    """The version of each of these rows as it now stands."""
    rows: list[Schedule] = []
    for start in range(0, len(ids), 500):
        query = _rows().where(schedules.c.id.in_(ids[start : start + 500]))
        rows.extend(schedule_from_row(row) for row in conn.execute(query))
    versions.record(conn, rows, change, removed=removed)


def set_payload(
    conn: Connection, schedule_id: UUID, payload: Mapping[str, Any], change: Change
) -> None:
    """Replace one row's payload: a definition change, so the revision moves on."""
    conn.execute(
        update(schedules)
        .where(schedules.c.id == schedule_id)
        .values(payload=payload, updated_at=change.at, revision=schedules.c.revision + 1)
    )
    _record(conn, [schedule_id], change)


def names_of(conn: Connection, schedule_ids: Iterable[UUID]) -> dict[UUID, str]:
    """The names of the schedules with these ids, in one statement (an id that is gone
    has none): a claim of items from a thousand schedules asked once, not per item."""
    ids = list(schedule_ids)
    if not ids:
        return {}
    query = select(schedules.c.id, schedules.c.name).where(schedules.c.id.in_(ids))
    return {row.id: row.name for row in conn.execute(query)}


def delete_schedules(conn: Connection, ids: Iterable[UUID], *, change: Change) -> int:
    """Delete rows by id, each leaving a last version marked removed (what `schedule
    restore` reads); returns how many were there (a vanished one is not an error)."""
    ids = list(ids)
    if not ids:
        return 0
    _record(conn, ids, change, removed=True)
    deleted = 0
    # Chunks keep the IN list under SQLite's bound-parameter limit.
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        # The state explicitly: no foreign key cascades (SQLite's are off).
        conn.execute(delete(schedule_state).where(schedule_state.c.id.in_(chunk)))
        label_index.forget(conn, chunk)
        deleted += conn.execute(delete(schedules).where(schedules.c.id.in_(chunk))).rowcount
    return deleted


def count_source(conn: Connection, tenant: str, stack: str, source: str) -> int:
    """How many rows of one source a stack has, in any environment."""
    from sqlalchemy import func

    query = select(func.count()).where(
        schedules.c.tenant == tenant, schedules.c.stack == stack, schedules.c.source == source
    )
    return int(conn.execute(query).scalar_one())


def lock_scope(conn: Connection, tenant: str, stack: str, environment: str) -> None:
    """Serialize syncs of one scope until commit (PostgreSQL advisory lock).

    SQLite needs none: its write transactions begin IMMEDIATE, one at a time.
    """
    dialects.of(conn).lock_scope(conn, f"cronplane-sync/{tenant}/{stack}/{environment}")
