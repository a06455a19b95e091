"""The Alerts page: the tenant's open alerts (Acknowledge), the recently closed, and the rules.

Routes (each one service call, each guarded by its action):

    GET  /alerts                    Reader   open and recent alerts, rules, channels
    POST /alerts/{alert_id}/ack     Runner   AlertService.ack_alert
    POST /alert-rules               Updater  AlertService.add_rule (the form below the rules)

Notifications link here (`console_url` + `/alerts?tenant=…`); the page shows
the signed-in tenant's alerts. The page lists the rules with what they watch,
and an editor adds one with the API's rules (docs/alerts.md); removing one
stays with the CLI and the API.
"""

from __future__ import annotations

from typing import Annotated, Any, Final
from urllib.parse import urlencode
from uuid import UUID

from fastapi import Depends, Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.alerts import (
    SKIP_REASONS,
    AlertRule,
    Condition,
    RuleSpec,
    ScopeKind,
    scoped,
)
from cronplane.errors import CronplaneError, InvalidAlertRule
from cronplane.ui.form import posted_fields
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Runner, Session, Updater

router = page_router()
RECENT: Final = 20
MAX_FIELD: Final = 1_024
Fields = Annotated[
    dict[str, Any], Depends(posted_fields(MAX_FIELD, {"reasons": 16, "channels": 16}))
]


def watched(rule: AlertRule) -> str:
    """What a rule watches, for people."""
    if rule.scope == "tenant":
        return "every schedule"
    if rule.scope == "selector":
        return f"schedules labelled {rule.selector}"
    if rule.scope == "stack":
        return f"stack {rule.stack}" + (f" / {rule.environment}" if rule.environment else "")
    return f"{rule.scope} {rule.stack} / {rule.environment} / {rule.target}"


def alerts_page(
    request: Request,
    session: Session,
    *,
    notice: str = "",
    error: CronplaneError | None = None,
    form: dict[str, Any] | None = None,
) -> Response:
    """The page, with a notice, or a refusal and the form as it was sent."""
    service = context_of(request).service
    closed = service.list_alerts(session.tenant, status="closed", limit=RECENT)
    return render(
        request,
        "alerts.html",
        {
            "session": session,
            "section": "alerts",
            "open_alerts": service.list_alerts(session.tenant, status="open"),
            "closed_alerts": closed,
            "rules": service.list_alert_rules(session.tenant),
            "channels": service.list_alert_channels(session.tenant),
            "watched": watched,
            "conditions": [c.value for c in Condition],
            "scopes": [k.value for k in ScopeKind],
            "reasons": SKIP_REASONS,
            "form": form or {"scope": "tenant", "reasons": [], "channels": []},
            "notice": notice,
            "error": error_context(error),
        },
        status_code=error.status if error is not None else 200,
    )


@router.get("/alerts")
def alerts(
    request: Request, session: Reader, notice: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """Open alerts first, then the recently closed; the rules and channels below."""
    return alerts_page(request, session, notice=notice)


@router.post("/alerts/{alert_id}/ack")
def ack(request: Request, session: Runner, alert_id: UUID) -> Response:
    """Acknowledge an alert (it stays open until its condition clears)."""
    try:
        alert = context_of(request).service.ack_alert(
            session.tenant, alert_id, actor=session.principal.actor
        )
    except CronplaneError as error:
        return alerts_page(request, session, error=error)
    notice = f"Acknowledged: {alert.condition} on {alert.schedule}."
    return RedirectResponse("/alerts?" + urlencode({"notice": notice}), status_code=303)


@router.post("/alert-rules")
def add_rule(request: Request, session: Updater, fields: Fields) -> Response:
    """Add a rule, as `cronplane alert rule add` does."""
    try:
        rule = context_of(request).service.add_alert_rule(
            session.tenant, rule_spec(fields), actor=session.principal.actor
        )
    except CronplaneError as error:
        return alerts_page(request, session, error=error, form=fields)
    notice = f"Added rule {rule.name}: {rule.condition} on {watched(rule)}."
    return RedirectResponse("/alerts?" + urlencode({"notice": notice}), status_code=303)


def rule_spec(fields: dict[str, Any]) -> RuleSpec:
    """The form's rule, without what its scope does not name (core.alerts.scoped)."""
    return scoped(
        RuleSpec(
            name=fields.get("name", ""),
            condition=fields.get("condition", ""),
            scope=fields.get("scope") or ScopeKind.TENANT.value,
            stack=fields.get("stack") or None,
            environment=fields.get("environment") or None,
            target=fields.get("target") or None,
            threshold=_seconds(fields.get("threshold", "")),
            reasons=tuple(fields["reasons"]),
            channels=tuple(fields["channels"]),
            selector=fields.get("selector") or None,
        )
    )


def _seconds(text: str) -> int | None:
    if not text:
        return None
    if not text.isdigit():
        raise InvalidAlertRule(
            f"threshold {text[:40]!r} is not a whole number of seconds", {"field": "threshold"}
        )
    return int(text)
