"""Alert use cases: channels, rules, alerts (list, acknowledge). One transaction each.

Permissions (api/alerts.py): managing rules and channels needs UPDATE (they
change what the tenant is told, like editing a schedule); acknowledging an
alert needs RUN (an operator on call acts on runs); reading needs READ.

Channel secrets arrive sealed (`cronplane webhook seal`, the webhook target's
keyring) and are stored sealed; no answer carries them (`Channel.to_dict`
shows `"secret": "set"`), and no event or log line does.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane import outbound
from cronplane.codes import Code
from cronplane.core import validation
from cronplane.core.alert_channels import channel_endpoint, check_channel
from cronplane.core.alert_rules import check_rule
from cronplane.core.alerts import (
    Alert,
    AlertRule,
    Channel,
    Condition,
    RuleSpec,
    Watched,
    watches,
)
from cronplane.core.cron import parse
from cronplane.core.cron_zones import known_zone
from cronplane.core.dst import DstPolicy
from cronplane.core.model import Scope
from cronplane.errors import (
    AlertNotFound,
    AlertRuleExists,
    AlertRuleNotFound,
    ChannelExists,
    ChannelNotFound,
    CronplaneError,
    InvalidAlertRule,
    InvalidChannel,
)
from cronplane.manifest import AppAlert
from cronplane.service.base import ServiceBase, Transaction
from cronplane.service.calendars import Exclusions
from cronplane.store import alert_rules as rules_store
from cronplane.store import alerts as store
from cronplane.store.events import append_event


@functools.lru_cache(maxsize=4096)
def _occurrences(cron: str, timezone: str, dst: DstPolicy) -> Callable[[datetime], datetime | None]:
    # Parsed once per expression and zone, not once per success or deadline.
    expression, zone = parse(cron), known_zone(timezone)
    return lambda after: expression.next_after(after, zone, dst)


def absent_due(
    row: Any, threshold: int, after: datetime, exclusions: Exclusions
) -> datetime | None:
    """The deadline of an `absent` watch: the schedule's next occurrence after
    `after` that runs (a business calendar's day moved or left out), plus the
    threshold; None when it has none (or cannot compute it)."""
    try:
        dst = DstPolicy(row.dst_gap, row.dst_repeat)
        occurrences = _occurrences(row.cron, row.timezone, dst)
        exclusion = exclusions.of(row)
        if exclusion is not None:
            occurrences = exclusion.running(occurrences)
        expected = occurrences(after)
    except (CronplaneError, ValueError):
        return None
    return None if expected is None else expected + timedelta(seconds=threshold)


def watch_rows(conn: Connection, rule: AlertRule, now: datetime) -> list[dict[str, Any]]:
    """The absent watches of a new rule over the schedules it covers."""
    if rule.condition != Condition.ABSENT or rule.threshold is None:
        return []
    rows = []
    exclusions = Exclusions(conn)
    for head in store.schedules_watched(conn, rule):
        due = absent_due(head, rule.threshold, now, exclusions)
        if due is not None:
            rows.append(
                {"rule_id": rule.id, "schedule_id": head.id, "tenant": rule.tenant, "due_at": due}
            )
    return rows


def head_watched(row: Any) -> Watched:
    """A schedule head as `core.alerts.watches` reads it (its labels as stored now)."""
    return Watched(row.stack, row.environment, row.name, row.job, dict(row.labels or {}))


def sync_app_rules(
    tx: Transaction,
    scope: Scope,
    declared: Mapping[str, AppAlert],
    *,
    actor: str,
) -> tuple[list[str], list[str]]:
    """Make the `app` rules of (stack, environment) what the manifest declares, inside
    the install's transaction: new or changed declarations are (re)created, rules no
    longer declared removed. Returns (created, removed) rule names."""
    conn = tx.conn
    current = {
        rule.name: rule
        for rule in rules_store.list_rules(conn, scope.tenant)
        if rule.source == "app"
        and (rule.stack, rule.environment) == (scope.stack, scope.environment)
    }
    wanted = {}
    for name, alert in declared.items():
        spec = check_rule(alert.spec(name, scope.stack, scope.environment))
        validation.validate_name(spec.name, "alert rule name")
        wanted[spec.name] = spec
    created, removed = [], []
    for name, rule in current.items():
        still = wanted.get(name)
        if still is not None and still == rule_spec(rule):
            del wanted[name]
            continue
        rules_store.delete_rule(conn, rule.id, tx.now)
        _rule_event(tx, ev.ALERT_RULE_REMOVED, scope.tenant, name, actor, "removed")
        removed.append(name)
    known = {c.name for c in rules_store.list_channels(conn, scope.tenant)}
    for name, spec in sorted(wanted.items()):
        missing = [c for c in spec.channels if c not in known]
        if missing:
            raise InvalidAlertRule(
                f"alert rule {name!r}: no channel {missing[0]!r} in {scope.tenant}",
                {"field": "channels", "channel": missing[0]},
            )
        rule = new_rule(scope.tenant, spec, actor, "app", tx.now)
        rules_store.insert_rule(conn, rule)
        store.put_watches(conn, watch_rows(conn, rule, tx.now))
        _rule_event(tx, ev.ALERT_RULE_CREATED, scope.tenant, name, actor, "created")
        created.append(name)
    return created, removed


def rule_spec(rule: AlertRule) -> RuleSpec:
    """The spec a stored rule was made from."""
    return RuleSpec(
        rule.name,
        rule.condition,
        rule.scope,
        rule.stack,
        rule.environment,
        rule.target,
        rule.threshold,
        rule.reasons,
        rule.channels,
        rule.renotify,
        rule.selector,
    )


def new_rule(tenant: str, spec: RuleSpec, actor: str, source: str, now: datetime) -> AlertRule:
    """A rule to store."""
    return AlertRule(
        id=uuid.uuid4(),
        tenant=tenant,
        name=spec.name,
        condition=spec.condition,
        scope=spec.scope,
        stack=spec.stack,
        environment=spec.environment,
        target=spec.target,
        threshold=spec.threshold,
        reasons=spec.reasons,
        channels=spec.channels,
        renotify=spec.renotify,
        source=source,
        created_by=actor,
        created_at=now,
        selector=spec.selector,
    )


def _rule_event(tx: Transaction, code: Code, tenant: str, name: str, actor: str, verb: str) -> None:
    append_event(
        tx.conn,
        code,
        tenant=tenant,
        actor=actor,
        now=tx.now,
        message=f"alert rule {name} {verb} by {actor}",
        detail={"rule": name},
    )


class AlertService(ServiceBase):
    """Channels, rules and alerts of a tenant."""

    # -- channels ---------------------------------------------------------------

    def add_channel(
        self,
        tenant: str,
        name: str,
        kind: str,
        config: Mapping[str, Any],
        *,
        secret: str | None,
        actor: str,
    ) -> Channel:
        """Store a channel; X400314CHNINV when invalid, X409316CHNDPL when the name is taken."""
        validation.validate_name(tenant, "tenant")
        validation.validate_name(name, "name")
        if secret is not None and not validation.is_sealed(secret):
            # The message never echoes the value: it may be the secret in clear.
            raise InvalidChannel(
                "secret must be sealed (cronplane webhook seal): a secret in clear is never stored",
                {"field": "secret"},
            )
        normalized = check_channel(kind, config, secret)
        endpoint = channel_endpoint(kind, normalized)
        if endpoint is not None:
            outbound.check_at_create(self.context.outbound, *endpoint)
        with self._write() as tx:
            channel = Channel(uuid.uuid4(), tenant, name, kind, normalized, secret, tx.now)
            if not rules_store.insert_channel(tx.conn, channel):
                raise ChannelExists(f"alert channel {name!r} exists", {"name": name})
            append_event(
                tx.conn,
                ev.CHANNEL_CREATED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"alert channel {name} ({kind}) created by {actor}",
                detail={"channel": name, "kind": kind},
            )
        return channel

    def list_channels(self, tenant: str) -> list[Channel]:
        """A tenant's channels by name."""
        with self._read() as conn:
            return rules_store.list_channels(conn, tenant)

    def remove_channel(self, tenant: str, name: str, *, actor: str) -> Channel:
        """Remove a channel; refused (X400314CHNINV) while a rule names it."""
        with self._write() as tx:
            channel = rules_store.get_channel(tx.conn, tenant, name)
            if channel is None:
                raise ChannelNotFound(f"alert channel {name!r} not found", {"name": name})
            users = [r.name for r in rules_store.list_rules(tx.conn, tenant) if name in r.channels]
            if users:
                raise InvalidChannel(
                    f"alert channel {name!r} is used by rule {users[0]!r}: remove the rule first",
                    {"field": "name", "rules": users},
                )
            rules_store.delete_channel(tx.conn, tenant, name)
            append_event(
                tx.conn,
                ev.CHANNEL_REMOVED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"alert channel {name} removed by {actor}",
                detail={"channel": name},
            )
        return channel

    # -- rules ------------------------------------------------------------------

    def add_rule(
        self, tenant: str, spec: RuleSpec, *, actor: str, source: str = "user"
    ) -> AlertRule:
        """Store a rule (X400310ALRINV, X409312ALRDPL); an `absent` rule starts its
        deadlines at each covered schedule's next occurrence."""
        validation.validate_name(tenant, "tenant")
        validation.validate_name(spec.name, "name")
        for part in ("stack", "environment", "target"):
            if getattr(spec, part) is not None:
                validation.validate_name(getattr(spec, part), part)
        spec = check_rule(spec)
        with self._write() as tx:
            known = {c.name for c in rules_store.list_channels(tx.conn, tenant)}
            unknown = [c for c in spec.channels if c not in known]
            if unknown:
                raise InvalidAlertRule(
                    f"alert rule {spec.name!r}: no channel {unknown[0]!r} in {tenant}",
                    {"field": "channels", "channel": unknown[0]},
                )
            rule = new_rule(tenant, spec, actor, source, tx.now)
            if not rules_store.insert_rule(tx.conn, rule):
                raise AlertRuleExists(f"alert rule {spec.name!r} exists", {"name": spec.name})
            store.put_watches(tx.conn, watch_rows(tx.conn, rule, tx.now))
            append_event(
                tx.conn,
                ev.ALERT_RULE_CREATED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"alert rule {rule.name} ({rule.condition}) created by {actor}",
                detail={
                    "rule": rule.name,
                    "condition": rule.condition,
                    "scope": rule.scope,
                    **({"selector": rule.selector} if rule.selector else {}),
                },
            )
        return rule

    def list_rules(self, tenant: str, *, schedule: Watched | None = None) -> list[AlertRule]:
        """A tenant's rules by name; `schedule`: only those watching it."""
        with self._read() as conn:
            rules = rules_store.list_rules(conn, tenant)
        return rules if schedule is None else [r for r in rules if watches(r, schedule)]

    def remove_rule(self, tenant: str, name: str, *, actor: str) -> AlertRule:
        """Remove a rule; its open alerts close without a notification."""
        with self._write() as tx:
            rule = rules_store.get_rule(tx.conn, tenant, name)
            if rule is None:
                raise AlertRuleNotFound(f"alert rule {name!r} not found", {"name": name})
            rules_store.delete_rule(tx.conn, rule.id, tx.now)
            append_event(
                tx.conn,
                ev.ALERT_RULE_REMOVED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"alert rule {name} removed by {actor}",
                detail={"rule": name},
            )
        return rule

    # -- alerts -----------------------------------------------------------------

    def list_alerts(
        self, tenant: str, *, status: str | None = None, limit: int = 100
    ) -> list[Alert]:
        """A tenant's alerts, newest first (`status`: open or closed)."""
        with self._read() as conn:
            return store.list_alerts(conn, tenant, status=status, limit=limit)

    def open_counts(self, tenant: str, schedule_ids: list[UUID]) -> dict[UUID, int]:
        """Open alerts per schedule (the console listing's badge)."""
        with self._read() as conn:
            return store.open_counts(conn, tenant, schedule_ids)

    def ack_alert(self, tenant: str, alert_id: UUID, *, actor: str) -> Alert:
        """Acknowledge an alert (it stays open until its condition clears)."""
        with self._write() as tx:
            alert = store.get_alert(tx.conn, tenant, alert_id)
            if alert is None:
                raise AlertNotFound(f"alert {alert_id} not found", {"alert_id": str(alert_id)})
            if alert.acked_at is None:
                alert = replace(alert, acked_at=tx.now, acked_by=actor)
                store.save_alert(tx.conn, alert, new=False)
                append_event(
                    tx.conn,
                    ev.ALERT_ACKED,
                    tenant=tenant,
                    stack=alert.stack,
                    environment=alert.environment,
                    schedule_id=alert.schedule_id,
                    schedule_name=alert.schedule,
                    actor=actor,
                    now=tx.now,
                    message=f"alert {alert.rule} on {alert.schedule} acknowledged by {actor}",
                    detail={"alert_id": str(alert.id), "rule": alert.rule},
                )
        return alert
