"""The alert configuration tables: channels and rules (the evaluator's reads of them too)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Connection, Row, delete, func, literal_column, select, update

from cronplane.core.alerts import AlertRule, Channel
from cronplane.store import dialects
from cronplane.store.tables import alert_channels, alert_rules, alert_watches, alerts

# Literal, not a parameter: SQLite uses a partial index only when the query's
# WHERE names the index's own condition.
OPEN = alerts.c.status == literal_column("'open'")


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
        selector=m["selector"],
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
        "selector": rule.selector,
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
    stack-, tenant- and selector-wide ones (ix_alert_rules_scope). `core.alerts.watches` decides."""
    wanted, names = sorted(set(tenants)), sorted(set(targets))
    if not wanted:
        return []
    kinds = list(conditions)
    broad = select(alert_rules).where(
        alert_rules.c.tenant.in_(wanted),
        alert_rules.c.scope.in_(["tenant", "stack", "selector"]),
        alert_rules.c.condition.in_(kinds),
    )
    if not names:
        return [rule_from_row(row) for row in conn.execute(broad)]
    named = select(alert_rules).where(
        alert_rules.c.tenant.in_(wanted),
        alert_rules.c.target.in_(names),
        alert_rules.c.condition.in_(kinds),
    )
    # One round trip; no rule is in both parts (a broad rule names no target).
    both = broad.union_all(named)
    return [rule_from_row(row) for row in conn.execute(both)]


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
