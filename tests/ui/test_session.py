"""The UI's HTTP contract without a browser: cookies, CSRF, redirects, refusals, paging.

Runs on the TestClient (fast, no Chromium): what a browser test cannot see
easily, such as cookie flags and forged requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from cronplane.api.app import create_app
from cronplane.clock import SystemClock
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.service.tokens import TokenService
from cronplane.store.database import Database
from cronplane.ui.listing import Filters, find_page
from cronplane.ui.session import SESSION_COOKIE

TENANT = "acme"


@pytest.fixture
def app_client(sqlite_database: Database) -> Iterator[TestClient]:
    """The API + UI over a fresh SQLite file with one job and one schedule in `acme`."""
    app = create_app(sqlite_database, SystemClock(), ui=True)
    service: ScheduleService = app.state.cronplane.service
    service.register_job(TENANT, "billing", JobSpec(name="report", target="python:m:f"), actor="t")
    service.create_schedule(
        Scope(TENANT, "billing", "prod"),
        ScheduleSpec(job="report", cron="@daily", name="nightly"),
        actor="t",
    )
    with TestClient(app, follow_redirects=False) as client:
        yield client


def tokens(client: TestClient) -> TokenService:
    service: TokenService = client.app.state.cronplane.service.tokens  # type: ignore[attr-defined]
    return service


def sign_in(
    client: TestClient, secret: str, tenant: str = "", next_path: str = "/"
) -> httpx.Response:
    client.get("/login")
    csrf = client.cookies.get("cronplane_signin_csrf")
    answer: httpx.Response = client.post(
        "/login", data={"token": secret, "tenant": tenant, "csrf": csrf, "next": next_path}
    )
    return answer


def csrf_of(client: TestClient) -> str:
    page = client.get("/")
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


def test_the_session_cookie_is_httponly_and_samesite_strict(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant=TENANT, role="admin", actor="t").secret
    answer = sign_in(app_client, secret)
    assert answer.status_code == 303
    cookie = next(
        value
        for value in answer.headers.get_list("set-cookie")
        if value.startswith(SESSION_COOKIE + "=")
    )
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie
    page = app_client.get("/")
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"


def test_sign_in_refuses_a_form_without_its_csrf_cookie(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant=TENANT, role="admin", actor="t").secret
    answer = app_client.post("/login", data={"token": secret, "csrf": "forged"})
    assert answer.status_code == 403
    assert "X403001FORBID" in answer.text
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")


def test_a_write_without_the_csrf_token_is_refused_and_changes_nothing(
    app_client: TestClient,
) -> None:
    secret = tokens(app_client).create(tenant=TENANT, role="admin", actor="t").secret
    sign_in(app_client, secret)
    path = "/schedules/billing/prod/nightly/disable"
    for data in ({}, {"csrf": "0" * 64}):
        answer = app_client.post(path, data=data)
        assert answer.status_code == 403
        assert "X403001FORBID" in answer.text
    service: ScheduleService = app_client.app.state.cronplane.service  # type: ignore[attr-defined]
    assert service.get_schedule(Scope(TENANT, "billing", "prod"), "nightly").enabled
    answer = app_client.post(path, data={"csrf": csrf_of(app_client)})
    assert answer.status_code == 303
    assert not service.get_schedule(Scope(TENANT, "billing", "prod"), "nightly").enabled


def test_sign_in_only_returns_to_local_paths(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant=TENANT, role="viewer", actor="t").secret
    assert sign_in(app_client, secret, next_path="//evil.example/x").headers["location"] == "/"
    answer = sign_in(app_client, secret, next_path="/schedules/billing/prod/nightly")
    assert answer.headers["location"] == "/schedules/billing/prod/nightly"


def test_a_platform_token_names_its_tenant_or_chooses_it_after(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant=None, role="viewer", actor="t").secret
    answer = sign_in(app_client, secret)
    assert answer.status_code == 303 and answer.headers["location"] == "/tenants"
    chooser = app_client.get("/", follow_redirects=False)  # no tenant yet: choose one
    assert chooser.status_code == 303 and chooser.headers["location"].startswith("/tenants?")
    htmx = app_client.get("/", headers={"HX-Request": "true"}, follow_redirects=False)
    assert htmx.status_code == 204 and htmx.headers["HX-Redirect"].startswith("/tenants?")
    assert sign_in(app_client, secret, tenant="not a name").status_code == 400
    assert sign_in(app_client, secret, tenant=TENANT).status_code == 303
    assert "nightly" in app_client.get("/").text


def test_another_tenants_token_sees_none_of_its_rows(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant="globex", role="admin", actor="t").secret
    sign_in(app_client, secret)
    assert "nightly" not in app_client.get("/").text
    missing = app_client.get("/schedules/billing/prod/nightly")
    assert missing.status_code == 404
    assert "X404902SCHNFD" in missing.text


def test_no_session_goes_to_sign_in_and_htmx_is_told_to_redirect(app_client: TestClient) -> None:
    page = app_client.get("/schedules/billing/prod/nightly")
    assert page.status_code == 303
    assert page.headers["location"].startswith("/login?next=%2Fschedules%2Fbilling")
    partial = app_client.get("/ui/cron/explain?cron=@daily", headers={"HX-Request": "true"})
    assert partial.status_code == 204
    assert partial.headers["HX-Redirect"].startswith("/login")


def test_a_revoked_token_ends_the_session(app_client: TestClient) -> None:
    created = tokens(app_client).create(tenant=TENANT, role="admin", actor="t")
    sign_in(app_client, created.secret)
    assert app_client.get("/").status_code == 200
    tokens(app_client).revoke(created.token.id, actor="t")
    answer = app_client.get("/")
    assert answer.status_code == 303
    assert "reason=" in answer.headers["location"]


def test_search_pages_are_exact(sqlite_database: Database) -> None:
    service = ScheduleService(sqlite_database, SystemClock())
    service.register_job(TENANT, "billing", JobSpec(name="report", target="python:m:f"), actor="t")
    scope = Scope(TENANT, "billing", "prod")
    for n in range(45):
        name = f"{'alpha' if n % 3 else 'beta'}-{n:02d}"
        service.create_schedule(
            scope, ScheduleSpec(job="report", cron="@daily", name=name), actor="t"
        )
    seen: list[str] = []
    filters = Filters(q="ALPHA")
    while True:
        rows, cursor = find_page(service, TENANT, filters, limit=7)
        assert len(rows) <= 7
        seen.extend(row.name for row in rows)
        if cursor is None:
            break
        filters = Filters(q="ALPHA", cursor=cursor)
    assert seen == sorted(f"alpha-{n:02d}" for n in range(45) if n % 3)
    rows, cursor = find_page(service, TENANT, Filters(status="inactive"))
    assert (rows, cursor) == ([], None)


def test_sign_out_needs_the_csrf_token_and_ends_the_session(app_client: TestClient) -> None:
    secret = tokens(app_client).create(tenant=TENANT, role="viewer", actor="t").secret
    sign_in(app_client, secret)
    assert app_client.post("/logout").status_code == 403
    answer = app_client.post("/logout", data={"csrf": csrf_of(app_client)})
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/login")
    assert app_client.get("/").status_code == 303
