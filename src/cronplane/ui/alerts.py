"""The Alerts page: the tenant's open alerts (Acknowledge), the recently closed, and the rules.

Routes (each one service call, each guarded by its action):

    GET  /alerts                    Reader   open and recent alerts, rules, channels
    POST /alerts/{alert_id}/ack     Runner   AlertService.ack_alert

Notifications link here (`console_url` + `/alerts?tenant=…`); the page shows
the signed-in tenant's alerts. Rules are managed with the CLI or the API
(docs/alerts.md); the page lists them with what they watch.
"""

from __future__ import annotations

from typing import Annotated, Final
from urllib.parse import urlencode
from uuid import UUID

from fastapi import Query, Request
from starlette.responses import RedirectResponse, Response

from cronplane.api.context import context_of
from cronplane.core.alerts import AlertRule
from cronplane.errors import CronplaneError
from cronplane.ui.pages import error_context, render
from cronplane.ui.route import page_router
from cronplane.ui.session import Reader, Runner, Session

router = page_router()
RECENT: Final = 20


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
    request: Request, session: Session, *, notice: str = "", error: CronplaneError | None = None
) -> Response:
    """The page, with a notice or a refusal in place."""
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
