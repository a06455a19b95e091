"""The alert tables: channels, rules, alerts, absent deadlines (watches), the cursor."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import (
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

from cronplane.core.alerts import Alert, AlertRule, Channel
from cronplane.store import dialects
from cronplane.store.tables import (
    alert_channels,
    alert_cursors,
    alert_rules,
    alert_watches,
    alerts,
    queue_items,
    schedules,
)

# Literals, not parameters: SQLite uses a partial index only when the query's
# WHERE names the index's own condition.
OPEN = alerts.c.status == literal_column("'open'")
QUEUED = queue_items.c.status == literal_column("'queued'")
RUNNING = queue_items.c.status == literal_column("'running'")

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
    schedules.c.enabled,
)

# -- channels -----------------------------------------------------------------


def channel_from_row(row: Row[Any]) -> Channel:
    """Map a row of `alert_channels`."""
    m = row._mapping
    return Channel(
        id=m["id"],
        tenant=m["tenant"],
        name=m["name"],
        kind=m["kind"],
        config=dict(m["config"] or {}),
        secret=m["secret"],
        created_at=m["created_at"],
    )


def insert_channel(conn: Connection, channel: Channel) -> bool:
    """Insert one; False when (tenant, name) exists."""
    query = (
        dialects.of(conn)
        .insert(alert_channels)
        .on_conflict_do_nothing(index_elements=["tenant", "name"])
        .returning(alert_channels.c.id)
    )
    values = {
        "id": channel.id,
        "tenant": channel.tenant,
        "name": channel.name,
        "kind": channel.kind,
        "config": dict(channel.config),
        "secret": channel.secret,
        "created_at": channel.created_at,
    }
    return conn.execute(query, values).first() is not None


def list_channels(conn: Connection, tenant: str) -> list[Channel]:
    """A tenant's channels by name."""
    query = select(alert_channels).where(alert_channels.c.tenant == tenant)
    rows = conn.execute(query.order_by(alert_channels.c.name))
    return [channel_from_row(r) for r in rows]


def get_channel(conn: Connection, tenant: str, name: str) -> Channel | None:
    """One channel by name."""
    query = select(alert_channels).where(
        alert_channels.c.tenant == tenant, alert_channels.c.name == name
    )
    row = conn.execute(query).first()
    return None if row is None else channel_from_row(row)


def delete_channel(conn: Connection, tenant: str, name: str) -> bool:
    """Delete one; False when there was none."""
    query = delete(alert_channels).where(
        alert_channels.c.tenant == tenant, alert_channels.c.name == name
    )
    return conn.execute(query).rowcount > 0


# -- rules --------------------------------------------------------------------


def rule_from_row(row: Row[Any]) -> AlertRule:
    """Map a row of `alert_rules`."""
    m = row._mapping
    return AlertRule(
        id=m["id"],
        tenant=m["tenant"],
        name=m["name"],
        condition=m["condition"],
        scope=m["scope"],
        stack=m["stack"],
        environment=m["environment"],
        target=m["target"],
        threshold=m["threshold"],
        reasons=tuple(m["reasons"] or ()),
        channels=tuple(m["channels"] or ()),
        renotify=m["renotify"],
        source=m["source"],
        created_by=m["created_by"],
        created_at=m["created_at"],
    )


def insert_rule(conn: Connection, rule: AlertRule) -> bool:
    """Insert one; False when (tenant, name) exists."""
    query = (
        dialects.of(conn)
        .insert(alert_rules)
        .on_conflict_do_nothing(index_elements=["tenant", "name"])
        .returning(alert_rules.c.id)
    )
    values = {
        "id": rule.id,
        "tenant": rule.tenant,
        "name": rule.name,
        "condition": rule.condition,
        "scope": rule.scope,
        "stack": rule.stack,
        "environment": rule.environment,
        "target": rule.target,
        "threshold": rule.threshold,
        "reasons": list(rule.reasons),
        "channels": list(rule.channels),
        "renotify": rule.renotify,
        "source": rule.source,
        "created_by": rule.created_by,
        "created_at": rule.created_at,
    }
    return conn.execute(query, values).first() is not None


def list_rules(conn: Connection, tenant: str) -> list[AlertRule]:
    """A tenant's rules by name."""
    query = select(alert_rules).where(alert_rules.c.tenant == tenant).order_by(alert_rules.c.name)
    return [rule_from_row(r) for r in conn.execute(query)]


def get_rule(conn: Connection, tenant: str, name: str) -> AlertRule | None:
    """One rule by name."""
    query = select(alert_rules).where(alert_rules.c.tenant == tenant, alert_rules.c.name == name)
    row = conn.execute(query).first()
    return None if row is None else rule_from_row(row)


def rules_by_id(conn: Connection, ids: Iterable[UUID]) -> dict[UUID, AlertRule]:
    """Rules by id (the ones still there)."""
    wanted = list(set(ids))
    if not wanted:
        return {}
    rows = conn.execute(select(alert_rules).where(alert_rules.c.id.in_(wanted)))
    return {rule.id: rule for rule in map(rule_from_row, rows)}


def rules_covering(
    conn: Connection, conditions: Sequence[str], tenants: Iterable[str], targets: Iterable[str]
) -> list[AlertRule]:
    """The rules of these conditions that may watch schedules of these tenants whose
    name or job is among `targets`: those naming one (ix_alert_rules_target) and the
    stack- and tenant-wide ones (ix_alert_rules_scope). `core.alerts.watches` decides."""
    wanted, names = sorted(set(tenants)), sorted(set(targets))
    if not wanted:
        return []
    found: dict[UUID, AlertRule] = {}
    kinds = list(conditions)
    queries = [
        select(alert_rules).where(
            alert_rules.c.tenant.in_(wanted),
            alert_rules.c.scope.in_(["tenant", "stack"]),
            alert_rules.c.condition.in_(kinds),
        )
    ]
    if names:
        queries.append(
            select(alert_rules).where(
                alert_rules.c.tenant.in_(wanted),
                alert_rules.c.target.in_(names),
                alert_rules.c.condition.in_(kinds),
            )
        )
    for query in queries:
        for row in conn.execute(query):
            rule = rule_from_row(row)
            found[rule.id] = rule
    return list(found.values())


def min_thresholds(conn: Connection, conditions: Sequence[str]) -> dict[str, int]:
    """The smallest threshold of each condition that has rules, in one statement (each
    the first entry of its range of ix_alert_rules_condition)."""
    firsts = [
        select(func.min(alert_rules.c.threshold))
        .where(alert_rules.c.condition == condition)
        .scalar_subquery()
        for condition in conditions
    ]
    row = conn.execute(select(*firsts)).one()
    return {c: int(v) for c, v in zip(conditions, row, strict=True) if v is not None}


def delete_rule(conn: Connection, rule_id: UUID, now: datetime) -> None:
    """Delete a rule, its watches, and close its open alerts without notifying."""
    conn.execute(delete(alert_watches).where(alert_watches.c.rule_id == rule_id))
    conn.execute(
        update(alerts)
        .where(alerts.c.rule_id == rule_id, OPEN)
        .values(status="closed", closed_at=now)
    )
    conn.execute(delete(alert_rules).where(alert_rules.c.id == rule_id))


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
    slot of ix_alerts_open), then the new ones; one executemany each."""
    updates = [{"_id": a.id, **alert_values(a)} for a in changed]
    if updates:
        columns = [c.name for c in alerts.columns if c.name != "id"]
        statement = (
            update(alerts)
            .where(alerts.c.id == bindparam("_id"))
            .values({name: bindparam(name) for name in columns})
        )
        conn.execute(statement, [{k: v for k, v in u.items() if k != "id"} for u in updates])
    inserts = [alert_values(a) for a in new]
    if inserts:
        conn.execute(insert(alerts), inserts)


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
    query = select(*SCHEDULE_HEAD).where(schedules.c.tenant == rule.tenant)
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
    rows: list[Row[Any]] = list(
        conn.execute(select(*SCHEDULE_HEAD).where(schedules.c.id.in_(wanted)))
    )
    return {row.id: row for row in rows}


def overdue_items(conn: Connection, late: bool, before: datetime) -> list[Row[Any]]:
    """Queued items scheduled before `before` (late: ix_queue_items_waiting), or running
    items started before it (long: ix_queue_items_running), of schedules."""
    column = queue_items.c.scheduled_for if late else queue_items.c.started_at
    query = select(
        queue_items.c.id,
        queue_items.c.tenant,
        queue_items.c.schedule_id,
        column.label("since"),
    ).where(QUEUED if late else RUNNING, column <= before, queue_items.c.schedule_id.is_not(None))
    rows: list[Row[Any]] = list(conn.execute(query))
    return rows


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
    """Set many watches' deadlines in one executemany."""
    if moves:
        statement = (
            update(alert_watches)
            .where(
                alert_watches.c.rule_id == bindparam("_rule"),
                alert_watches.c.schedule_id == bindparam("_schedule"),
            )
            .values(due_at=bindparam("_due"))
        )
        rows = [{"_rule": r, "_schedule": s, "_due": due} for (r, s), due in moves.items()]
        conn.execute(statement, rows)


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
