"""Rendering: the Jinja2 environment, its filters, and the headers every page carries.

Templates live in `ui/templates/`: `base.html` (header, sign-out, scripts),
one template per page, and `_*.html` partials that htmx swaps in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from fastapi import Request
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.responses import RedirectResponse, Response

from cronplane import __version__
from cronplane.core.cron import known_zone
from cronplane.core.redact import redact_text
from cronplane.errors import CronplaneError, UnknownZone

TEMPLATE_DIR: Final = Path(__file__).parent / "templates"
STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_PREFIX: Final = "/ui/static"

# No inline script or style anywhere: everything comes from /ui/static.
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def when(value: datetime | None, zone: str = "UTC", seconds: bool = False) -> Markup:
    """A UTC instant as the viewer reads times: in UTC unless they chose otherwise; a dash
    when None.

    The console's one time rule (docs/console.md, "Times, once"): a page shows every time in one zone,
    the viewer's choice, named in the column's header (`zone_label`). The server
    writes UTC, the default; the time display switch (console.js) re-renders every
    `<time>` in the browser's zone, or in `data-zone` (the row's own zone) when
    the viewer asks for "each schedule's zone". `seconds` shows them too (a
    schedule of `every 10 seconds`, whose next instants would otherwise read alike).
    """
    return _time(value, zone, "seconds" if seconds else "datetime")


def wall(value: datetime | None, zone: str = "UTC", seconds: bool = False) -> Markup:
    """An instant as the clock in `zone` reads it, whatever the viewer chose: for what
    is about that zone's wall clock (a cron's next runs in its zone, named in its
    header). The UTC reading is on hover."""
    return _time(value, zone, "seconds" if seconds else "datetime", fixed=True)


def clock(value: datetime | None, zone: str = "UTC") -> Markup:
    """Like `when`, the time of day only ("next attempt at 14:05 UTC")."""
    return _time(value, zone, "time")


# How each form of `<time>` reads (console.js formats its `data-form` alike).
_PATTERNS: Final = {
    "datetime": "%Y-%m-%d %H:%M %Z",
    "seconds": "%Y-%m-%d %H:%M:%S %Z",
    "time": "%H:%M %Z",
}


def _time(value: datetime | None, zone: str, form: str, *, fixed: bool = False) -> Markup:
    pattern = _PATTERNS[form]
    if value is None:
        return Markup('<span class="muted" aria-label="never">—</span>')
    try:
        local = value.astimezone(known_zone(zone))
    except UnknownZone:
        zone, local = "UTC", value.astimezone(UTC)
    utc = value.astimezone(UTC)
    # `data-local`: the row's own zone's reading, written here so "each schedule's
    # zone" names zones as the rest of the product does (+08, not the browser's GMT+8).
    return Markup(
        '<time datetime="{}" data-zone="{}" data-form="{}" data-local="{}"{} title="{} UTC">{}</time>'
    ).format(
        utc.isoformat(),
        zone,
        form,
        local.strftime(pattern),
        Markup(' data-fixed=""') if fixed else "",
        utc.strftime("%Y-%m-%d %H:%M:%S"),
        (local if fixed else utc).strftime(pattern),
    )


def zone_label() -> Markup:
    """A column header's zone name: UTC as served; console.js names the viewer's choice."""
    return Markup('<span class="zone-label" data-zone-label>(UTC)</span>')


def pretty_json(value: Any) -> str:
    """Indented JSON for editors and detail cells."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def compact_json(value: Any) -> str:
    """One-line JSON for data attributes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _masked(value: Any) -> Any:
    if isinstance(value, str) and "://" in value:
        masked = redact_text(str(value))
        return value if masked == str(value) else type(value)(masked)
    return value


def _templates() -> Jinja2Templates:
    templates = Jinja2Templates(directory=TEMPLATE_DIR)
    env = templates.env
    env.filters["when"] = when
    env.filters["wall"] = wall
    env.globals["zone_label"] = zone_label
    env.filters["clock"] = clock
    env.filters["pretty_json"] = pretty_json
    env.filters["compact_json"] = compact_json
    env.globals["static"] = STATIC_PREFIX
    env.globals["version"] = __version__
    # Every `{{ … }}` the console prints: credentials in URLs masked (core.redact).
    env.finalize = _masked
    env.trim_blocks = True
    env.lstrip_blocks = True
    return templates


TEMPLATES: Final = _templates()


def render(
    request: Request,
    name: str,
    context: dict[str, Any] | None = None,
    *,
    status_code: int = 200,
) -> Response:
    """Render template `name` with `context`, with the security headers.

    A page with a `session` also gets `can` (its `Permissions`), so every
    template asks the same object which buttons to show.
    """
    context = dict(context or {})
    session = context.get("session")
    if session is not None:
        context.setdefault("can", session.permissions)
    response = TEMPLATES.TemplateResponse(request, name, context, status_code=status_code)
    response.headers.update(SECURITY_HEADERS)
    return response


def error_context(error: CronplaneError | None) -> dict[str, Any] | None:
    """A coded error as templates show it: code, message and the field it is about."""
    if error is None:
        return None
    field = error.detail.get("field")
    return {
        "code": error.code.text,
        "message": error.message,
        "field": field if isinstance(field, str) else None,
        "problems": error.detail.get("problems") or [],
    }


def to_listing(back: object, query: Mapping[str, str]) -> RedirectResponse:
    """Back to the listing page a form came from (`back`: a listing link, `/?…`; anything
    else: the listing's first page), with `query` (notice, refused) added."""
    target = back if isinstance(back, str) and back.startswith("/?") else "/?"
    separator = "" if target.endswith("?") else "&"
    return RedirectResponse(target + separator + urlencode(query), status_code=303)
