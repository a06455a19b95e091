"""What one evaluation pass holds: the open alerts it touched and what it changed
(written once at the end), the notifications to send, its report; and `covering`,
the rules that watch a set of schedules, read by index."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from sqlalchemy import Connection, Row

from cronplane.core.alerts import (
    Alert,
    AlertRule,
    Condition,
    Decision,
    NotificationKind,
    Observation,
    ScopeKind,
    on_cleared,
    on_observed,
    places,
    watches,
)
from cronplane.service.alerts import head_watched
from cronplane.service.calendars import Exclusions
from cronplane.store import alert_rules as rules_store
from cronplane.store import alerts as store


@dataclass
class EvaluationReport:
    """What one pass did."""

    events: int = 0
    opened: int = 0
    repeated: int = 0
    recovered: int = 0
    deliveries: int = 0


@dataclass
class Book:
    """The open alerts a pass touched, keyed (rule, schedule), and what changed."""

    conn: Connection
    now: datetime
    open: dict[tuple[UUID, UUID], Alert] = field(default_factory=dict)
    loaded: set[UUID] = field(default_factory=set)
    notes: list[tuple[AlertRule | None, Alert, NotificationKind]] = field(default_factory=list)
    report: EvaluationReport = field(default_factory=EvaluationReport)
    # Written once at the end of the pass (executemany), not statement by statement.
    new: dict[UUID, Alert] = field(default_factory=dict)
    changed: dict[UUID, Alert] = field(default_factory=dict)
    moves: dict[tuple[UUID, UUID], datetime] = field(default_factory=dict)
    # Conditions whose open alerts are all in `open` already (no per-schedule read).
    complete: set[str] = field(default_factory=set)
    job_written: bool = False
    # The schedules' excluded days (absent deadlines), each tenant's calendars read once.
    exclusions: Exclusions = field(init=False)

    def __post_init__(self) -> None:
        self.exclusions = Exclusions(self.conn)

    def flush(self) -> None:
        """Write the alerts and deadlines this pass changed."""
        store.write_alerts(self.conn, self.changed.values(), self.new.values())
        store.move_watches(self.conn, self.moves)

    def load(self, schedule_ids: Iterable[UUID]) -> None:
        """Read the open alerts of these schedules once per pass."""
        missing = set(schedule_ids) - self.loaded
        if not missing:
            return
        for alert in store.open_alerts_of(self.conn, missing):
            self.open[(alert.rule_id, alert.schedule_id)] = alert
        self.loaded |= missing

    def observe(self, rule: AlertRule, head: Row[Any], seen: Observation) -> None:
        if rule.condition not in self.complete:
            self.load([head.id])
        current = self.open.get((rule.id, head.id))
        fresh = Alert(
            id=uuid.uuid4(),
            tenant=rule.tenant,
            rule_id=rule.id,
            rule=rule.name,
            condition=rule.condition,
            schedule_id=head.id,
            schedule=head.name,
            stack=head.stack,
            environment=head.environment,
            status="open",
            count=1,
            opened_at=self.now,
            last_seen_at=seen.at,
            notified_at=self.now,
            closed_at=None,
            acked_at=None,
            acked_by=None,
            last_key=seen.key,
            detail=dict(seen.detail),
        )
        decision = on_observed(rule, current, fresh, seen, self.now)
        if decision is not None:
            self._apply(rule, decision, new=current is None)

    def clear(self, rule: AlertRule | None, alert: Alert) -> None:
        decision = on_cleared(alert, self.now)
        if decision is not None:
            self._apply(rule, decision, new=False)

    def _apply(self, rule: AlertRule | None, decision: Decision, *, new: bool) -> None:
        alert = decision.alert
        if new or alert.id in self.new:
            self.new[alert.id] = alert
        else:
            self.changed[alert.id] = alert
        key = (alert.rule_id, alert.schedule_id)
        if alert.status == "open":
            self.open[key] = alert
        else:
            self.open.pop(key, None)
        if decision.notify is None:
            return
        self.notes.append((rule, alert, decision.notify))
        if decision.notify == NotificationKind.OPENED:
            self.report.opened += 1
        elif decision.notify == NotificationKind.REPEATED:
            self.report.repeated += 1
        else:
            self.report.recovered += 1


class RulesOf(Protocol):
    """The rules watching a schedule head; `placed`: also the selector rules its labels
    do not match now (what keeps an `absent` deadline, what a success clears)."""

    def __call__(self, head: Row[Any], *, placed: bool = False) -> list[AlertRule]: ...


def covering(
    conn: Connection, conditions: list[Condition], heads: Mapping[UUID, Row[Any]]
) -> RulesOf:
    """The rules of `conditions` watching each of these schedules, read in two indexed
    queries (rules naming a schedule or job among theirs, and the broad ones: stack,
    tenant, selector). A selector rule is judged by the labels on the head's row."""
    targets = {h.name for h in heads.values()} | {h.job for h in heads.values()}
    tenants = {h.tenant for h in heads.values()}
    named: dict[tuple[str, str | None], list[AlertRule]] = defaultdict(list)
    broad: dict[str, list[AlertRule]] = defaultdict(list)
    for rule in rules_store.rules_covering(conn, conditions, tenants, targets):
        if rule.scope in (ScopeKind.TENANT, ScopeKind.STACK, ScopeKind.SELECTOR):
            broad[rule.tenant].append(rule)
        else:
            named[(rule.tenant, rule.target)].append(rule)

    def rules_of(head: Row[Any], *, placed: bool = False) -> list[AlertRule]:
        found = [*broad[head.tenant], *named[(head.tenant, head.name)]]
        if head.job != head.name:
            found += named[(head.tenant, head.job)]
        judge = places if placed else watches
        return [rule for rule in found if judge(rule, head_watched(head))]

    return rules_of
