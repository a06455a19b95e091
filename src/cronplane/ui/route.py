"""`PageRoute`: the route class of every UI page, so refusals become pages.

The API's exception handlers answer JSON. A UI route instead sends a browser
without a session to the sign-in page (htmx: an `HX-Redirect`), and shows a
coded refusal (forbidden, not found, bad CSRF) as an HTML error page with
its code and HTTP status.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from starlette.responses import RedirectResponse, Response

from cronplane.errors import CronplaneError
from cronplane.ui.pages import error_context, render
from cronplane.ui.session import PageRefused, SignInRequired, TenantRequired


def signin_redirect(request: Request, reason: str) -> Response:
    """Send the browser to sign in, coming back here afterwards (GET pages only)."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    htmx = bool(request.headers.get("HX-Request"))
    if request.method != "GET" or htmx:
        target = "/"
    query = {"next": target, **({"reason": reason} if reason else {})}
    location = "/login?" + urlencode(query)
    if htmx:
        # htmx follows this header with a full page load.
        return Response(status_code=204, headers={"HX-Redirect": location})
    return RedirectResponse(location, status_code=303)


def choose_tenant(request: Request) -> Response:
    """Send a platform session without a tenant to the Tenants page to choose one."""
    location = "/tenants?" + urlencode({"reason": "Choose a tenant to manage."})
    if request.headers.get("HX-Request"):
        return Response(status_code=204, headers={"HX-Redirect": location})
    return RedirectResponse(location, status_code=303)


def error_page(request: Request, error: CronplaneError) -> Response:
    """A refusal as a page: its code, message and status."""
    return render(request, "error.html", {"error": error_context(error)}, status_code=error.status)


class PageRoute(APIRoute):
    """An APIRoute whose refusals are pages (see the module docstring)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler (which also runs the dependencies), wrapped."""
        handle = super().get_route_handler()

        async def page(request: Request) -> Response:
            try:
                return await handle(request)
            except SignInRequired as missing:
                return signin_redirect(request, missing.reason)
            except TenantRequired:
                return choose_tenant(request)
            except PageRefused as refused:
                return error_page(request, refused.error)
            except CronplaneError as error:
                return error_page(request, error)

        return page


def page_router() -> APIRouter:
    """A router for UI pages: PageRoute, kept out of the OpenAPI document."""
    return APIRouter(route_class=PageRoute, include_in_schema=False)
