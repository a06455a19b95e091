"""Alert routes: channels and rules (UPDATE to change, READ to list), alerts
(READ to list, RUN to acknowledge). See docs/alerts.md.

Channel secrets are given sealed (`cronplane webhook seal`) and never answered:
a channel shows `"secret": "set"`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Depends, Query, status
from pydantic import Field

from cronplane.api.auth import CanRead, CanRun, CanUpdate
from cronplane.api.context import ApiContext, current_context
from cronplane.api.schemas import MAX_TEXT, NameSegment, NameText, Request, Response
from cronplane.core.alerts import DEFAULT_RENOTIFY, RuleSpec
from cronplane.core.selectors import MAX_TEXT as MAX_SELECTOR
from cronplane.core.selectors import REQUIREMENTS_REGEX

router = APIRouter(prefix="/tenants/{tenant}", tags=["alerts"])
Context = Annotated[ApiContext, Depends(current_context)]
Segment = NameSegment
Seconds = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]


class ChannelCreate(Request):
    """A delivery channel; `secret` sealed: the webhook's signing secret, the Slack
    incoming-webhook URL, or the SMTP password."""

    name: NameText
    kind: Literal["webhook", "slack", "email"]
    config: dict[str, Any] = Field(default_factory=dict)
    secret: str | None = Field(default=None, max_length=MAX_TEXT)


class ChannelOut(Response):
    """A channel as answered: its secret only as `"set"` (or null)."""

    id: UUID
    tenant: str
    name: str
    kind: str
    config: dict[str, Any]
    secret: Literal["set"] | None
    created_at: datetime


class ChannelList(Response):
    """A tenant's channels by name."""

    items: list[ChannelOut]


class RuleCreate(Request):
    """An alert rule (docs/alerts.md: conditions, scopes, thresholds). Scope `selector`
    takes `selector`, a label selector (Kubernetes' syntax, e.g. `team=payments,tier!=batch`)
    judged against each schedule's labels when a condition is evaluated; a selector that
    does not parse is 400 X400310ALRINV with `detail.field` = `selector`."""

    name: NameText
    condition: Literal["failed", "skipped", "late", "long", "absent"]
    scope: Literal["schedule", "job", "stack", "tenant", "selector"] = "tenant"
    stack: NameText | None = None
    environment: NameText | None = None
    target: NameText | None = None
    threshold: Seconds | None = None
    reasons: list[NameText] = Field(default_factory=list, max_length=16)
    channels: list[NameText] = Field(default_factory=list, max_length=16)
    renotify: Seconds = DEFAULT_RENOTIFY
    # The document carries the grammar as a pattern; the parser refuses, naming the place.
    selector: str | None = Field(
        default=None, max_length=MAX_SELECTOR, json_schema_extra={"pattern": REQUIREMENTS_REGEX}
    )


class RuleOut(Response):
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
    reasons: list[str]
    channels: list[str]
    renotify: int
    source: str
    created_by: str
    created_at: datetime
    selector: str | None  # canonical, with scope `selector`


class RuleList(Response):
    """A tenant's rules by name."""

    items: list[RuleOut]


class Delivery(Response):
    """A channel's last notification of an alert: a failed one's error says why."""

    state: Literal["sent", "retrying", "failed"]
    at: datetime
    error: str | None = None


class AlertOut(Response):
    """One rule's condition on one schedule (at most one open per pair)."""

    id: UUID
    tenant: str
    rule_id: UUID
    rule: str
    condition: str
    schedule_id: UUID
    schedule: str
    stack: str
    environment: str
    status: str
    count: int
    opened_at: datetime
    last_seen_at: datetime
    notified_at: datetime
    closed_at: datetime | None
    acked_at: datetime | None
    acked_by: str | None
    last_key: str
    detail: dict[str, Any]
    delivery: Literal["failed", "retrying", "sent"] | None = Field(
        None, description="The worst of its channels' last notification deliveries."
    )
    deliveries: dict[str, Delivery] = Field(
        default_factory=dict, description="Each channel's last notification delivery."
    )


class AlertList(Response):
    """A tenant's alerts, newest first."""

    items: list[AlertOut]


@router.get("/alert-channels", response_model=ChannelList, summary="List alert channels")
def list_channels(ctx: Context, _: CanRead, tenant: Segment) -> dict[str, Any]:
    """The tenant's channels (secrets shown only as "set")."""
    return {"items": [c.to_dict() for c in ctx.service.list_alert_channels(tenant)]}


@router.post(
    "/alert-channels",
    response_model=ChannelOut,
    status_code=status.HTTP_201_CREATED,
    summary="Add an alert channel",
)
def add_channel(
    ctx: Context, principal: CanUpdate, tenant: Segment, body: ChannelCreate
) -> dict[str, Any]:
    """400 X400314CHNINV when invalid (a secret in clear included), 409 X409316CHNDPL."""
    channel = ctx.service.add_alert_channel(
        tenant, body.name, body.kind, body.config, secret=body.secret, actor=principal.actor
    )
    return channel.to_dict()


@router.delete(
    "/alert-channels/{name}", response_model=ChannelOut, summary="Remove an alert channel"
)
def remove_channel(
    ctx: Context, principal: CanUpdate, tenant: Segment, name: Segment
) -> dict[str, Any]:
    """Refused (X400314CHNINV) while a rule names the channel."""
    return ctx.service.remove_alert_channel(tenant, name, actor=principal.actor).to_dict()


@router.get("/alert-rules", response_model=RuleList, summary="List alert rules")
def list_rules(ctx: Context, _: CanRead, tenant: Segment) -> dict[str, Any]:
    """The tenant's rules by name."""
    return {"items": [r.to_dict() for r in ctx.service.list_alert_rules(tenant)]}


@router.post(
    "/alert-rules",
    response_model=RuleOut,
    status_code=status.HTTP_201_CREATED,
    summary="Add an alert rule",
)
def add_rule(
    ctx: Context, principal: CanUpdate, tenant: Segment, body: RuleCreate
) -> dict[str, Any]:
    """400 X400310ALRINV (the detail names the field), 409 X409312ALRDPL."""
    spec = RuleSpec(
        name=body.name,
        condition=body.condition,
        scope=body.scope,
        stack=body.stack,
        environment=body.environment,
        target=body.target,
        threshold=body.threshold,
        reasons=tuple(body.reasons),
        channels=tuple(body.channels),
        renotify=body.renotify,
        selector=body.selector,
    )
    return ctx.service.add_alert_rule(tenant, spec, actor=principal.actor).to_dict()


@router.delete("/alert-rules/{name}", response_model=RuleOut, summary="Remove an alert rule")
def remove_rule(
    ctx: Context, principal: CanUpdate, tenant: Segment, name: Segment
) -> dict[str, Any]:
    """Remove a rule; its open alerts close without a notification."""
    return ctx.service.remove_alert_rule(tenant, name, actor=principal.actor).to_dict()


@router.get("/alerts", response_model=AlertList, summary="List alerts")
def list_alerts(
    ctx: Context,
    _: CanRead,
    tenant: Segment,
    status: Annotated[str | None, Query(pattern="^(open|closed)$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The tenant's alerts, newest first, optionally open or closed only."""
    alerts = ctx.service.list_alerts(tenant, status=status, limit=limit)
    return {"items": [a.to_dict() for a in alerts]}


@router.post("/alerts/{alert_id}/ack", response_model=AlertOut, summary="Acknowledge an alert")
def ack_alert(ctx: Context, principal: CanRun, tenant: Segment, alert_id: UUID) -> dict[str, Any]:
    """Mark an alert acknowledged (it stays open until its condition clears)."""
    return ctx.service.ack_alert(tenant, alert_id, actor=principal.actor).to_dict()
