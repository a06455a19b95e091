"""The alert tables: alerts, absent deadlines (watches), the evaluator's cursor, and its
reads of schedules and the live queue. Channels and rules: `store.alert_rules`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    bindparam,
    delete,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.sql import Select

from cronplane.core.alerts import Alert, AlertRule
from cronplane.store import dialects
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.tables import (
    SCHEDULE_ROWS,
    alert_cursors,
    alert_watches,
    alerts,
    queue_items,
    schedule_state,
    schedules,
)

# Literals, not parameters: SQLite uses a partial index only when the query's
# WHERE names the index's own condition.
OPEN = alerts.c.status == literal_column("'open'")
QUEUED = queue_items.c.status == literal_column("'queued'")
RUNNING = queue_items.c.status == literal_column("'running'")
PAUSED = schedules.c.paused_at.is_not(None)

# What the evaluator needs of a schedule: scope, job, and when it is due.
SCHEDULE_HEAD = (
    schedules.c.id,
    schedules.c.tenant,
    schedules.c.stack,
    schedules.c.environment,
    schedules.c.name,
    schedules.c.job,
    schedules.c.cron,
    schedules.c.timezone,
    schedules.c.dst_gap,
    schedules.c.dst_repeat,
    schedules.c.exclude,
    schedules.c.on_excluded,
    schedule_state.c.enabled,
    schedules.c.labels,  # a selector rule judges them (core.alerts.watches)
)


def _heads(*columns: Any) -> Select[Any]:
    """SELECT of SCHEDULE_HEAD (and `columns`): `enabled` is the state's (store.tables)."""
    return select(*SCHEDULE_HEAD, *columns).select_from(SCHEDULE_ROWS)


# -- alerts -------------------------------------------------------------------


def alert_from_row(row: Row[Any]) -> Alert:
    """Map a row of `alerts`."""
    m = row._mapping
    return Alert(
        id=m["id"],
        tenant=m["tenant"],
        rule_id=m["rule_id"],
        rule=m["rule"],
        condition=m["condition"],
        schedule_id=m["schedule_id"],
        schedule=m["schedule"],
        stack=m["stack"],
        environment=m["environment"],
        status=m["status"],
        count=m["count"],
        opened_at=m["opened_at"],
        last_seen_at=m["last_seen_at"],
        notified_at=m["notified_at"],
        closed_at=m["closed_at"],
        acked_at=m["acked_at"],
        acked_by=m["acked_by"],
        last_key=m["last_key"],
        detail=dict(m["detail"] or {}),
        deliveries=dict(m["deliveries"] or {}),
    )


def alert_values(alert: Alert) -> dict[str, Any]:
    """The column values of an Alert."""
    return {
        "id": alert.id,
        "tenant": alert.tenant,
        "rule_id": alert.rule_id,
        "rule": alert.rule,
        "condition": alert.condition,
        "schedule_id": alert.schedule_id,
        "schedule": alert.schedule,
        "stack": alert.stack,
        "environment": alert.environment,
        "status": alert.status,
        "count": alert.count,
        "opened_at": alert.opened_at,
        "last_seen_at": alert.last_seen_at,
        "notified_at": alert.notified_at,
        "closed_at": alert.closed_at,
        "acked_at": alert.acked_at,
        "acked_by": alert.acked_by,
        "last_key": alert.last_key,
        "detail": dict(alert.detail),
    }


def save_alert(conn: Connection, alert: Alert, *, new: bool) -> None:
    """Insert a new alert or write an existing one back."""
    values = alert_values(alert)
    if new:
        conn.execute(insert(alerts), values)
    else:
        conn.execute(update(alerts).where(alerts.c.id == alert.id).values(values))


def write_alerts(conn: Connection, changed: Iterable[Alert], new: Iterable[Alert]) -> None:
    """Write a pass's alerts: the changed ones first (a close frees the (rule, schedule)
    slot of ix_alerts_open), then the new ones; the updates in one executemany, the inserts in one bulk statement."""
    updates = [{"_id": a.id, **alert_values(a)} for a in changed]
    if updates:
        columns = [c.name for c in alerts.columns if c.name not in ("id", "deliveries")]
        statement = (
            update(alerts)
            .where(alerts.c.id == bindparam("_id"))
            .values({name: bindparam(name) for name in columns})
        )
        conn.execute(statement, [{k: v for k, v in u.items() if k != "id"} for u in updates])
    insert_dicts(conn, alerts, [alert_values(a) for a in new])


def open_alerts_of(conn: Connection, schedule_ids: Iterable[UUID]) -> list[Alert]:
    """The open alerts of these schedules (ix_alerts_open_schedule)."""
    wanted = list(set(schedule_ids))
    if not wanted:
        return []
    query = select(alerts).where(OPEN, alerts.c.schedule_id.in_(wanted))
    return [alert_from_row(r) for r in conn.execute(query)]


def open_alerts_by_condition(conn: Connection, conditions: Sequence[str]) -> list[Alert]:
    """The open alerts of these conditions (the partial ix_alerts_open: open alerts only)."""
    query = select(alerts).where(OPEN, alerts.c.condition.in_(list(conditions)))
    return [alert_from_row(r) for r in conn.execute(query)]


def list_alerts(
    conn: Connection, tenant: str, *, status: str | None = None, limit: int = 100
) -> list[Alert]:
    """A tenant's alerts, newest first (ix_alerts_tenant)."""
    query = select(alerts).where(alerts.c.tenant == tenant)
    if status is not None:
        query = query.where(alerts.c.status == status)
    query = query.order_by(alerts.c.opened_at.desc(), alerts.c.id).limit(limit)
    return [alert_from_row(r) for r in conn.execute(query)]


def prune_closed(conn: Connection, before: datetime) -> int:
    """Delete alerts closed before `before` (housekeeping's retention); how many."""
    closed = alerts.c.status == literal_column("'closed'")
    return conn.execute(delete(alerts).where(closed, alerts.c.closed_at < before)).rowcount


def get_alert(conn: Connection, tenant: str, alert_id: UUID) -> Alert | None:
    """One alert of a tenant."""
    query = select(alerts).where(alerts.c.tenant == tenant, alerts.c.id == alert_id)
    row = conn.execute(query).first()
    return None if row is None else alert_from_row(row)


def open_counts(conn: Connection, tenant: str, schedule_ids: Sequence[UUID]) -> dict[UUID, int]:
    """Open alerts per schedule, for the listing's badge."""
    if not schedule_ids:
        return {}
    query = (
        select(alerts.c.schedule_id, func.count())
        .where(OPEN, alerts.c.schedule_id.in_(list(schedule_ids)))
        .where(alerts.c.tenant == tenant)
        .group_by(alerts.c.schedule_id)
    )
    return {row[0]: int(row[1]) for row in conn.execute(query)}


def schedules_watched(conn: Connection, rule: AlertRule) -> list[Row[Any]]:
    """The heads of the schedules a rule's scope covers (one indexed range per scope kind)."""
    query = _heads().where(schedules.c.tenant == rule.tenant)
    if rule.stack is not None:
        query = query.where(schedules.c.stack == rule.stack)
    if rule.environment is not None:
        query = query.where(schedules.c.environment == rule.environment)
    if rule.scope == "job":
        query = query.where(schedules.c.job == rule.target)
    elif rule.scope == "schedule":
        query = query.where(schedules.c.name == rule.target)
    rows: list[Row[Any]] = list(conn.execute(query))
    return rows


def schedule_heads(conn: Connection, ids: Iterable[UUID]) -> dict[UUID, Row[Any]]:
    """Schedule heads by id (primary-key lookups; gone ones are missing)."""
    wanted = list(set(ids))
    if not wanted:
        return {}
    rows: list[Row[Any]] = list(conn.execute(_heads().where(schedules.c.id.in_(wanted))))
    return {row.id: row for row in rows}


def overdue_items(conn: Connection, late: bool, before: datetime, now: datetime) -> list[Row[Any]]:
    """Of schedules' items: queued ones scheduled before `before` (late), or running
    ones started before it (long: ix_queue_items_running_since).

    Late items are looked for among the claimable backlog (queued, available by
    `now`: the claim index's own rows), so the fire path pays for no index of
    its own; in a healthy queue that backlog is what workers have not reached.
    """
    wanted: tuple[ColumnElement[bool], ...]
    if late:
        since = queue_items.c.scheduled_for
        wanted = (QUEUED, queue_items.c.available_at <= now, since <= before)
    else:
        since = queue_items.c.started_at
        wanted = (RUNNING, since <= before)
    query = select(
        queue_items.c.id,
        queue_items.c.tenant,
        queue_items.c.schedule_id,
        since.label("since"),
    ).where(*wanted, queue_items.c.schedule_id.is_not(None))
    rows: list[Row[Any]] = list(conn.execute(query))
    return rows


def backlog_of_long_runs(
    conn: Connection, schedule_ids: Iterable[UUID], threshold: Mapping[UUID, float]
) -> set[UUID]:
    """Of these schedules, those whose runs are not back under their `long` threshold yet:
    an item still queued or running, and the latest finished run took the threshold or more."""
    wanted = list(set(schedule_ids))
    if not wanted:
        return set()
    active = set(
        conn.execute(
            select(queue_items.c.schedule_id)
            .where(QUEUED | RUNNING, queue_items.c.schedule_id.in_(wanted))
            .distinct()
        ).scalars()
    )
    behind = set()
    for sid in active:
        last = conn.execute(
            select(queue_items.c.started_at, queue_items.c.finished_at)
            .where(
                queue_items.c.schedule_id == sid,
                queue_items.c.finished_at.is_not(None),
                queue_items.c.started_at.is_not(None),
            )
            .order_by(queue_items.c.finished_at.desc())
            .limit(1)
        ).first()
        if last is not None and (last[1] - last[0]).total_seconds() >= threshold[sid]:
            behind.add(sid)
    return behind


def paused_heads(conn: Connection, before: datetime, now: datetime) -> list[Row[Any]]:
    """Heads (with the pause) of the schedules paused since `before` or earlier whose
    pause has not run out at `now` (ix_schedules_paused: paused rows only)."""
    rows: list[Row[Any]] = list(conn.execute(paused_query(before, now)))
    return rows


def paused_query(before: datetime, now: datetime) -> Select[Any]:
    """The query of `paused_heads`."""
    return _heads(
        schedules.c.paused_at,
        schedules.c.paused_until,
        schedules.c.paused_by,
        schedules.c.paused_note,
    ).where(
        PAUSED,
        schedules.c.paused_at <= before,
        (schedules.c.paused_until.is_(None)) | (schedules.c.paused_until > now),
    )


# -- absent deadlines -----------------------------------------------------------


def put_watches(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Insert watches (rule_id, schedule_id, tenant, due_at); existing ones stay."""
    if rows:
        query = (
            dialects.of(conn)
            .insert(alert_watches)
            .on_conflict_do_nothing(index_elements=["rule_id", "schedule_id"])
        )
        conn.execute(query, list(rows))


def due_watches(conn: Connection, now: datetime, limit: int) -> list[Row[Any]]:
    """Watches whose deadline passed, earliest first (ix_alert_watches_due)."""
    query = (
        select(alert_watches)
        .where(alert_watches.c.due_at <= now)
        .order_by(alert_watches.c.due_at)
        .limit(limit)
    )
    return list(conn.execute(query))


def watches_of(conn: Connection, schedule_ids: Iterable[UUID]) -> list[Row[Any]]:
    """The watches of these schedules (ix_alert_watches_schedule)."""
    wanted = list(set(schedule_ids))
    if not wanted:
        return []
    return list(conn.execute(select(alert_watches).where(alert_watches.c.schedule_id.in_(wanted))))


def move_watch(conn: Connection, rule_id: UUID, schedule_id: UUID, due_at: datetime) -> None:
    """Set one watch's deadline."""
    conn.execute(
        update(alert_watches)
        .where(alert_watches.c.rule_id == rule_id, alert_watches.c.schedule_id == schedule_id)
        .values(due_at=due_at)
    )


def move_watches(conn: Connection, moves: Mapping[tuple[UUID, UUID], datetime]) -> None:
    """Set many watches' deadlines: one statement on PostgreSQL (store.bulk)."""
    if moves:
        dialect = dialects.of(conn)
        enc = dialect.params
        rows = [(enc.datetime(due), enc.uuid(r), enc.uuid(s)) for (r, s), due in moves.items()]
        dialect.update_rows(conn, alert_watches, ("rule_id", "schedule_id"), "due_at", rows)


def drop_watch(conn: Connection, rule_id: UUID, schedule_id: UUID) -> None:
    """Forget one watch (its schedule is gone)."""
    conn.execute(
        delete(alert_watches).where(
            alert_watches.c.rule_id == rule_id, alert_watches.c.schedule_id == schedule_id
        )
    )


# -- the evaluator's cursor -----------------------------------------------------------


def read_cursor(conn: Connection, name: str) -> int | None:
    """The last event id the evaluator processed; None before its first pass."""
    query = select(alert_cursors.c.event_id).where(alert_cursors.c.name == name)
    value = conn.execute(query).scalar()
    return None if value is None else int(value)


def write_cursor(conn: Connection, name: str, event_id: int) -> None:
    """Store the position (insert the row on the first pass)."""
    done = conn.execute(
        update(alert_cursors).where(alert_cursors.c.name == name).values(event_id=event_id)
    )
    if done.rowcount == 0:
        conn.execute(insert(alert_cursors).values(name=name, event_id=event_id))
