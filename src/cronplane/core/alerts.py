"""Alert rules, channels and alerts as values, and the pure decisions about them.

A rule watches a scope of one tenant (one schedule, a job, a stack/environment,
or the whole tenant) for one condition; an alert is the open (or closed)
instance of a rule's condition on one schedule. The evaluator
(`cronplane.alerting`) observes; this module decides, from values alone:

- whether a rule watches a schedule (:func:`watches`);
- what an observation does to the one alert per (rule, schedule)
  (:func:`on_observed`): open it and notify, or update it (count, last seen)
  and notify again only once the re-notify interval has passed;
- what a clearing does (:func:`on_cleared`): close an open alert, notify once.

Channels' configuration is checked in `core.alert_channels`, a rule's in `core.alert_rules`.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final
from uuid import UUID

from cronplane.core.codec import to_document
from cronplane.core.redact import redact_value
from cronplane.core.selectors import Selector, parse_selector
from cronplane.errors import InvalidRequest

NAME_LIMIT: Final = 64
MAX_THRESHOLD: Final = 366 * 24 * 3600
MIN_RENOTIFY: Final = 60
DEFAULT_RENOTIFY: Final = 3600
MAX_CHANNELS_PER_RULE: Final = 10


class Condition(enum.StrEnum):
    """What a rule watches for."""

    FAILED = "failed"  # an item failed after its last attempt, or expired
    SKIPPED = "skipped"  # an occurrence was skipped (with a reason)
    LATE = "late"  # an item did not start within N s of scheduled_for
    LONG = "long"  # an item has been running for more than N s
    ABSENT = "absent"  # no success within N s after an expected occurrence


# Conditions that need a threshold N (seconds).
TIMED: Final = frozenset({Condition.LATE, Condition.LONG, Condition.ABSENT})


class ScopeKind(enum.StrEnum):
    """What a rule watches: one schedule, a job's schedules, a stack/environment, the
    tenant, or the tenant's schedules whose labels match a selector."""

    SCHEDULE = "schedule"
    JOB = "job"
    STACK = "stack"
    TENANT = "tenant"
    SELECTOR = "selector"  # every schedule of the tenant whose labels match, when judged


def paused_limit(rule: RuleSpec | AlertRule) -> bool:
    """A `skipped` rule with a threshold watches for a schedule paused longer than
    N s (its reasons are exactly `paused`), not for skip events."""
    return rule.condition == Condition.SKIPPED and rule.threshold is not None


# Skip reasons a `skipped` rule may name, by the ledger event that records them.
# A new reason is one entry here and one in `alerting.SKIP_EVENTS`.
SKIP_REASONS: Final = ("overlap", "misfire", "job_missing", "paused")


class ChannelKind(enum.StrEnum):
    """How a notification is delivered."""

    WEBHOOK = "webhook"  # signed JSON POST
    SLACK = "slack"  # Slack-compatible incoming webhook (text with a console link)
    EMAIL = "email"  # SMTP


class NotificationKind(enum.StrEnum):
    """Why a notification is sent."""

    OPENED = "opened"
    REPEATED = "repeated"  # still open after the re-notify interval
    RECOVERED = "recovered"


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A rule as an operator or a manifest gives it."""

    name: str
    condition: str
    scope: str = ScopeKind.TENANT.value
    stack: str | None = None
    environment: str | None = None
    target: str | None = None  # the schedule's or the job's name
    threshold: int | None = None
    reasons: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    renotify: int = DEFAULT_RENOTIFY
    selector: str | None = None  # a label selector (core.selectors): scope `selector`


# The parts of a rule each scope names as the CLI and the console make one (check_rule
# refuses the others; a stack rule made through the API may also name an environment:
# the CLI's and the console's environment always has a value, so theirs name none).
_PLACED: Final = frozenset({"stack", "environment", "target"})
SCOPE_PARTS: Final[Mapping[str, frozenset[str]]] = {
    ScopeKind.SCHEDULE: _PLACED,
    ScopeKind.JOB: _PLACED,
    ScopeKind.STACK: frozenset({"stack"}),
    ScopeKind.TENANT: frozenset(),
    ScopeKind.SELECTOR: frozenset({"selector"}),
}


def scoped(spec: RuleSpec) -> RuleSpec:
    """`spec` without the parts its scope does not name (SCOPE_PARTS): a form shows every
    input, and what was typed into one its scope ignores is not a refusal."""
    parts = SCOPE_PARTS.get(spec.scope, frozenset())
    return replace(
        spec,
        stack=spec.stack if "stack" in parts else None,
        environment=spec.environment if "environment" in parts else None,
        target=spec.target if "target" in parts else None,
        selector=spec.selector if "selector" in parts else None,
    )


@dataclass(frozen=True, slots=True)
class AlertRule:
    """A stored rule."""

    id: UUID
    tenant: str
    name: str
    condition: str
    scope: str
    stack: str | None
    environment: str | None
    target: str | None
    threshold: int | None
    reasons: tuple[str, ...]
    channels: tuple[str, ...]
    renotify: int
    source: str
    created_by: str
    created_at: datetime
    selector: str | None = None  # canonical (core.selectors), with scope `selector`

    def to_dict(self) -> dict[str, Any]:
        """The rule's JSON document."""
        return to_document(self)


@dataclass(frozen=True, slots=True)
class Channel:
    """A stored delivery channel; `secret` is sealed and never leaves the service."""

    id: UUID
    tenant: str
    name: str
    kind: str
    config: Mapping[str, Any]
    secret: str | None
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """The channel as every surface shows it: the secret only as "set"."""
        return {
            "id": str(self.id),
            "tenant": self.tenant,
            "name": self.name,
            "kind": self.kind,
            "config": redact_value(dict(self.config)),
            "secret": "set" if self.secret else None,
            "created_at": self.created_at.isoformat(),
        }


# A notification's states, worst first: an alert shows its worst channel's.
DELIVERY_ORDER: Final = ("failed", "retrying", "sent")


def worst_delivery(deliveries: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The worst state among channels' last deliveries (DELIVERY_ORDER), or None."""
    states = {str(d.get("state")) for d in deliveries.values()}
    return next((s for s in DELIVERY_ORDER if s in states), None)


@dataclass(frozen=True, slots=True)
class Alert:
    """One rule's condition on one schedule; at most one is open per (rule, schedule)."""

    id: UUID
    tenant: str
    rule_id: UUID
    rule: str
    condition: str
    schedule_id: UUID
    schedule: str
    stack: str
    environment: str
    status: str  # open | closed
    count: int
    opened_at: datetime
    last_seen_at: datetime
    notified_at: datetime
    closed_at: datetime | None
    acked_at: datetime | None
    acked_by: str | None
    last_key: str
    detail: Mapping[str, Any] = field(default_factory=dict)
    # Its last notification on each channel: {state: sent|retrying|failed, at, error}.
    deliveries: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def delivery(self) -> str | None:
        """The worst of its channels' last deliveries (failed, retrying, sent), or None."""
        return worst_delivery(self.deliveries)

    def to_dict(self) -> dict[str, Any]:
        """The alert's JSON document (what `to_document` gives, spelled out: a pass that
        opens hundreds of alerts puts one in every delivery's payload)."""

        def iso(value: datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        return {
            "id": str(self.id),
            "tenant": self.tenant,
            "rule_id": str(self.rule_id),
            "rule": self.rule,
            "condition": self.condition,
            "schedule_id": str(self.schedule_id),
            "schedule": self.schedule,
            "stack": self.stack,
            "environment": self.environment,
            "status": self.status,
            "count": self.count,
            "opened_at": self.opened_at.isoformat(),
            "last_seen_at": self.last_seen_at.isoformat(),
            "notified_at": self.notified_at.isoformat(),
            "closed_at": iso(self.closed_at),
            "acked_at": iso(self.acked_at),
            "acked_by": self.acked_by,
            "last_key": self.last_key,
            "detail": self.detail,
            "delivery": self.delivery,
            "deliveries": {name: dict(d) for name, d in self.deliveries.items()},
        }


@dataclass(frozen=True, slots=True)
class Watched:
    """What a rule needs to know of a schedule to say whether it watches it."""

    stack: str
    environment: str
    name: str
    job: str
    labels: Mapping[str, str] = field(default_factory=dict)  # as they are when judged


@dataclass(frozen=True, slots=True)
class Observation:
    """A condition seen on a schedule: `key` names the instance (an event, an item),
    so seeing the same instance again is not a repeat."""

    key: str
    at: datetime
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    """What to store and whether to notify."""

    alert: Alert
    notify: NotificationKind | None


def watches(rule: AlertRule, schedule: Watched) -> bool:
    """True when `rule`'s scope covers `schedule`; a selector rule by the labels the
    schedule has now (`Watched.labels`)."""
    if rule.scope == ScopeKind.SELECTOR:
        return selects(rule.selector or "", schedule.labels)
    return places(rule, schedule)


def places(rule: AlertRule, schedule: Watched) -> bool:
    """True when `rule` may watch `schedule` whatever its labels: a selector rule places
    every schedule of its tenant (an `absent` deadline is kept on each, so a schedule
    labelled later is covered; `watches` judges the labels when it matters)."""
    if rule.scope in (ScopeKind.TENANT, ScopeKind.SELECTOR):
        return True
    if rule.scope == ScopeKind.STACK:
        return schedule.stack == rule.stack and (
            rule.environment is None or schedule.environment == rule.environment
        )
    in_place = schedule.stack == rule.stack and schedule.environment == rule.environment
    if rule.scope == ScopeKind.JOB:
        return in_place and schedule.job == rule.target
    return in_place and schedule.name == rule.target


def on_observed(
    rule: AlertRule,
    current: Alert | None,
    fresh: Alert,
    seen: Observation,
    now: datetime,
) -> Decision | None:
    """The alert after `seen`: `fresh` (opened, notify) when none is open; else the
    open one updated, notified again once `rule.renotify` seconds have passed since
    the last notification. None when nothing changes (the same instance seen again
    within the interval)."""
    if current is None or current.status != "open":
        return Decision(fresh, NotificationKind.OPENED)
    repeat = seen.key != current.last_key
    due = now - current.notified_at >= timedelta(seconds=rule.renotify)
    if not repeat and not due:
        return None
    updated = replace(
        current,
        count=current.count + (1 if repeat else 0),
        last_seen_at=seen.at if repeat else current.last_seen_at,
        last_key=seen.key,
        detail=dict(seen.detail) if repeat else current.detail,
        notified_at=now if due else current.notified_at,
    )
    return Decision(updated, NotificationKind.REPEATED if due else None)


def on_cleared(current: Alert | None, now: datetime) -> Decision | None:
    """Close an open alert and notify its recovery once; None when none is open."""
    if current is None or current.status != "open":
        return None
    return Decision(replace(current, status="closed", closed_at=now), NotificationKind.RECOVERED)


@functools.lru_cache(maxsize=1024)
def _selector(text: str) -> Selector:
    return parse_selector(text)


def selects(selector: str, labels: Mapping[str, str]) -> bool:
    """Whether a schedule with `labels` is selected by a stored (valid) selector: the
    same parser and meaning as `schedule ls -l`; one that no longer parses selects none."""
    try:
        return bool(_selector(selector)) and _selector(selector).matches(labels)
    except InvalidRequest:
        return False


def summary(alert: Alert, kind: NotificationKind) -> str:
    """One line for people: what happened, where."""
    place = f"{alert.tenant}/{alert.stack}/{alert.environment}/{alert.schedule}"
    if kind == NotificationKind.RECOVERED:
        return f"[cronplane] RECOVERED {alert.condition}: {place} (rule {alert.rule})"
    again = " (still open)" if kind == NotificationKind.REPEATED else ""
    return (
        f"[cronplane] {alert.condition.upper()}{again}: {place} (rule {alert.rule}, x{alert.count})"
    )
