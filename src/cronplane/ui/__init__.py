"""The web UI: the schedule console, server-rendered, served beside the API at `/`.

    mount(app, oidc)    add the UI's pages and static files to an API app (oidc: the
                        CRONPLANE_OIDC_* settings, or None for token sign-in only)

Pages (`listing`, `editor`, `runs`, `feedback`, `jobs`, `alerts`, `signin`) are thin edges over
the same services and access checks the API uses (`ScheduleService`,
`RunService`, `core.access.check`); the session is the API token in an
HttpOnly cookie (`session`); refusals become pages (`route`). Templates are
Jinja2 (`pages`); the little JavaScript is htmx plus `static/console.js`,
with no build step.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from cronplane.settings import OidcSettings
from cronplane.ui import (
    alerts,
    calendars,
    controls,
    editor,
    feedback,
    job_versions,
    jobs,
    listing,
    oidc,
    run_page,
    runs,
    selection,
    signin,
    tenants,
    versions,
)
from cronplane.ui.oidc_session import OidcSignIn
from cronplane.ui.pages import STATIC_DIR, STATIC_PREFIX

__all__ = ["mount"]


def mount(app: FastAPI, oidc_settings: OidcSettings | None = None) -> None:
    """Serve the UI from `app`: pages at `/`, static files under `/ui/static`; with
    `oidc_settings`, sign-in through the OIDC provider too (`cronplane.ui.oidc`)."""
    app.state.oidc = OidcSignIn(oidc_settings) if oidc_settings is not None else None
    first = (signin, oidc, listing, selection, editor, controls, runs, feedback, jobs, alerts)
    for module in (*first, run_page, tenants, calendars, versions, job_versions):
        app.include_router(module.router)
    app.mount(STATIC_PREFIX, StaticFiles(directory=STATIC_DIR), name="ui-static")
