"""OIDC sign-in over real HTTP: the console (uvicorn) and a test provider (uvicorn), httpx
following the flow step by step so each answer and cookie can be looked at.

Good sign-ins, then every check refusing with its code and nothing signed in: state,
audience, issuer, expiry, signature, nonce, a code used twice, an unmapped user; and a
session cookie tampered with, sign-out, CSRF on writes.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import OctKey
from oidc_idp import CLIENT_SECRET, OidcWorld, Provider, new_key, served
from ui_support import TENANT, World, add_schedule

from cronplane.api.app import create_app
from cronplane.clock import SystemClock
from cronplane.core.access import Role
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.ui.oidc_session import FLOW_COOKIE, OIDC_COOKIE
from cronplane.ui.session import SESSION_COOKIE


@pytest.fixture
def client(oidc_world: OidcWorld, idp: Provider) -> Iterator[httpx.Client]:
    """A cookie-keeping client of the OIDC console that follows no redirect by itself."""
    with httpx.Client(base_url=oidc_world.url, follow_redirects=False, timeout=10) as http:
        yield http


def begin(client: httpx.Client, next_path: str = "/") -> str:
    """Start a sign-in: the provider's authorization URL the console sends the browser to."""
    answer = client.get("/login/oidc", params={"next": next_path})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def approve(authorize_url: str, user: str) -> str:
    """The provider's page, approved as `user`: the callback URL it sends the browser to."""
    params = dict(parse_qsl(urlsplit(authorize_url).query))
    with httpx.Client(follow_redirects=False, timeout=10) as browser:
        assert browser.get(authorize_url).status_code == 200
        base = authorize_url.split("?", 1)[0]
        answer = browser.post(base, data={**params, "username": user})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def sign_in(client: httpx.Client, user: str, next_path: str = "/") -> httpx.Response:
    """The whole flow; the callback's answer."""
    return client.get(approve(begin(client, next_path), user))


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


def set_cookie_header(answer: httpx.Response, name: str) -> str:
    return next(v for v in answer.headers.get_list("set-cookie") if v.startswith(name + "="))


def assert_signed_out(client: httpx.Client) -> None:
    assert OIDC_COOKIE not in client.cookies
    answer = client.get("/")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_the_sign_in_page_offers_the_provider_and_tokens(client: httpx.Client) -> None:
    page = client.get("/login").text
    assert "Sign in with Test IdP" in page and 'href="/login/oidc?next=%2F"' in page
    assert 'label for="token">API token' in page


def test_without_oidc_settings_there_is_no_button_and_no_flow(world: World) -> None:
    with httpx.Client(base_url=world.url, follow_redirects=False) as plain:
        assert "Sign in with" not in plain.get("/login").text
        answer = plain.get("/login/oidc")
        assert answer.status_code == 404 and "X404001NOROUT" in answer.text


def test_the_flow_sends_pkce_state_and_nonce(client: httpx.Client, oidc_world: OidcWorld) -> None:
    location = begin(client)
    assert location.startswith(oidc_world.provider.url + "/authorize?")
    params = dict(parse_qsl(urlsplit(location).query))
    assert params["response_type"] == "code" and params["code_challenge_method"] == "S256"
    assert len(params["state"]) >= 32 and len(params["nonce"]) >= 32
    assert params["redirect_uri"] == oidc_world.url + "/login/oidc/callback"
    assert FLOW_COOKIE in client.cookies


def test_an_editor_signs_in_pauses_and_is_recorded_as_the_oidc_actor(
    client: httpx.Client, world: World
) -> None:
    answer = sign_in(client, "zz-edith", "/?q=zz-oidc")
    assert answer.status_code == 303 and answer.headers["location"] == "/?q=zz-oidc"
    cookie = set_cookie_header(answer, OIDC_COOKIE).lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "max-age=" in cookie
    assert "edith" not in cookie  # sealed: neither readable nor changeable
    # It ends with the ID token (the provider's last 600 s), before the 8 h maximum.
    max_age = int(re.search(r"max-age=(\d+)", cookie).group(1))  # type: ignore[union-attr]
    assert 500 < max_age <= 600
    page = client.get("/").text
    assert "Edith Editor" in page and "editor" in page and f"<strong>{TENANT}</strong>" in page
    assert 'title="oidc:edith@example.test"' in page
    # A write: the CSRF scheme holds for OIDC sessions too.
    add_schedule(world, "zz-oidc-paused")
    path = "/schedules/billing/prod/zz-oidc-paused/pause"
    refused = client.post(path, data={"note": "no csrf"})
    assert refused.status_code == 403 and "X403001FORBID" in refused.text
    done = client.post(path, data={"csrf": csrf_of(page), "note": "by oidc"})
    assert done.status_code in (200, 303), done.text
    service = ScheduleService(world.database, SystemClock())
    scope = Scope(TENANT, "billing", "prod")
    row = service.get_schedule(scope, "zz-oidc-paused")
    assert row.paused and row.paused_by == "oidc:edith@example.test"
    actors = {event.actor for event in service.schedule_history(scope, "zz-oidc-paused")}
    assert "oidc:edith@example.test" in actors


def test_a_viewer_cannot_pause(client: httpx.Client, world: World) -> None:
    assert sign_in(client, "zz-victor").status_code == 303
    page = client.get("/").text
    assert "Victor Viewer" in page and "viewer" in page
    add_schedule(world, "zz-oidc-viewed")
    path = "/schedules/billing/prod/zz-oidc-viewed/pause"
    refused = client.post(path, data={"csrf": csrf_of(page), "note": "viewer"})
    assert refused.status_code == 403 and "X403001FORBID" in refused.text


def test_sign_out_ends_the_oidc_session(client: httpx.Client) -> None:
    sign_in(client, "zz-edith")
    page = client.get("/").text
    answer = client.post("/logout", data={"csrf": csrf_of(page)})
    assert answer.status_code == 303
    assert_signed_out(client)


def test_a_tampered_session_cookie_is_no_session(client: httpx.Client) -> None:
    sign_in(client, "zz-edith")
    sealed = client.cookies[OIDC_COOKIE]
    flipped = sealed[:40] + ("A" if sealed[40] != "A" else "B") + sealed[41:]
    client.cookies.set(OIDC_COOKIE, flipped)
    answer = client.get("/")
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_a_multi_tenant_user_switches_between_their_tenants(client: httpx.Client) -> None:
    sign_in(client, "zz-multi")
    page = client.get("/").text
    assert 'action="/session/tenant"' in page and "zz-oidc-other" in page
    answer = client.post("/session/tenant", data={"csrf": csrf_of(page), "tenant": "zz-oidc-other"})
    assert answer.status_code == 303
    page = client.get("/").text
    assert '<option value="zz-oidc-other" selected>' in page
    # A tenant the grants do not name: the same answer as any other tenant not found.
    answer = client.post("/session/tenant", data={"csrf": csrf_of(page), "tenant": "zz-secret"})
    assert answer.status_code == 404 and "X404906TENNFD" in answer.text


def test_a_platform_grant_chooses_its_tenant_on_the_tenants_page(client: httpx.Client) -> None:
    answer = sign_in(client, "zz-plato")
    assert answer.headers["location"] == "/tenants"
    assert client.get("/tenants").status_code == 200


def refused(answer: httpx.Response, client: httpx.Client, code: str) -> None:
    """A coded refusal page, no session cookie set, and nothing signed in."""
    assert answer.status_code == int(code[1:4]), answer.text
    assert code in answer.text
    assert not any(v.startswith(OIDC_COOKIE + "=") for v in answer.headers.get_list("set-cookie"))
    assert_signed_out(client)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        ({"aud": "another-client"}, "aud is wrong"),
        ({"iss": "https://evil.example"}, "iss is wrong"),
        ({"exp": 1_000_000_000, "iat": 999_999_000}, "has expired"),
        ({"nonce": "not-the-flows-nonce"}, "nonce is wrong"),
        ({"nonce": None}, "nonce is wrong"),
    ],
    ids=["audience", "issuer", "expired", "nonce-mismatch", "nonce-missing"],
)
def test_a_bad_id_token_is_refused(
    client: httpx.Client, idp: Provider, tamper: dict[str, Any], message: str
) -> None:
    idp.tamper = tamper
    answer = sign_in(client, "zz-edith")
    refused(answer, client, "X401390OIDREJ")
    assert message in answer.text


def test_a_token_signed_by_another_key_is_refused(client: httpx.Client, idp: Provider) -> None:
    idp.signing_key = new_key()  # same key id, not the published key
    answer = sign_in(client, "zz-edith")
    refused(answer, client, "X401390OIDREJ")
    assert "signature does not verify" in answer.text


def test_a_state_mismatch_is_refused(client: httpx.Client) -> None:
    callback = approve(begin(client), "zz-edith")
    parts = urlsplit(callback)
    params = dict(parse_qsl(parts.query))
    forged = f"{parts.scheme}://{parts.netloc}{parts.path}?" + urlencode(
        {**params, "state": "forged-state"}
    )
    answer = client.get(forged)
    refused(answer, client, "X401390OIDREJ")
    assert "state is not this browser" in answer.text


def test_a_callback_without_its_flow_cookie_is_refused(client: httpx.Client) -> None:
    callback = approve(begin(client), "zz-edith")
    client.cookies.clear()  # the answer reaches another browser than the one that began
    answer = client.get(callback)
    refused(answer, client, "X401390OIDREJ")
    assert "another browser" in answer.text


def test_a_code_is_used_once(client: httpx.Client) -> None:
    callback = approve(begin(client), "zz-edith")
    flow = client.cookies[FLOW_COOKIE]
    assert client.get(callback).status_code == 303
    # The same answer again, even with its flow cookie back: the provider spent the code.
    client.cookies.clear()
    client.cookies.set(FLOW_COOKIE, flow, domain="127.0.0.1", path="/login/oidc")
    answer = client.get(callback)
    refused(answer, client, "X401390OIDREJ")
    assert "refused the authorization code" in answer.text


def test_a_user_whose_claims_map_to_no_role_is_refused(client: httpx.Client) -> None:
    answer = sign_in(client, "zz-nobody")
    refused(answer, client, "X403390OIDROL")
    assert "nobody@example.test" in answer.text and "CRONPLANE_OIDC_ROLE_MAP" in answer.text


def test_a_token_session_and_an_oidc_one_replace_each_other(
    client: httpx.Client, world: World
) -> None:
    signin = client.get("/login")
    token = client.post(
        "/login", data={"token": world.tokens[Role.VIEWER], "csrf": csrf_of(signin.text)}
    )
    assert token.status_code == 303 and SESSION_COOKIE in client.cookies
    answer = sign_in(client, "zz-edith")
    assert set_cookie_header(answer, SESSION_COOKIE).startswith(f'{SESSION_COOKIE}=""')
    assert SESSION_COOKIE not in client.cookies and "Edith Editor" in client.get("/").text
    signin = client.get("/login")
    client.post("/login", data={"token": world.tokens[Role.VIEWER], "csrf": csrf_of(signin.text)})
    assert OIDC_COOKIE not in client.cookies
    assert "viewer-browser" in client.get("/").text


def test_a_rotated_signing_key_is_fetched_again(client: httpx.Client, idp: Provider) -> None:
    assert sign_in(client, "zz-edith").status_code == 303  # the console holds key 1
    first = idp.key
    idp.key = new_key("zz-key-2")  # the provider rotates: JWKS and signature change
    try:
        client.cookies.clear()
        assert sign_in(client, "zz-victor").status_code == 303
    finally:
        idp.key = first


def test_an_hmac_token_keyed_by_the_client_secret_is_refused(
    client: httpx.Client, idp: Provider
) -> None:
    # The classic confusion: HS256 with a secret the client knows, not the provider's key.
    idp.signing_key = OctKey.import_key(CLIENT_SECRET * 2)
    idp.algorithm = "HS256"
    answer = sign_in(client, "zz-edith")
    refused(answer, client, "X401390OIDREJ")
    assert "signature does not verify" in answer.text


def test_a_provider_that_does_not_answer_is_503(world: World, idp: Provider) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    nowhere = create_app(
        world.database,
        SystemClock(),
        ui=True,
        oidc=idp.settings(issuer=f"http://127.0.0.1:{port}"),
    )
    # A discovery document naming another issuer (here: the same one with a `/`) is refused.
    elsewhere = create_app(
        world.database, SystemClock(), ui=True, oidc=idp.settings(issuer=idp.url + "/")
    )
    for app in (nowhere, elsewhere):
        with served(app) as url, httpx.Client(base_url=url) as http:
            answer = http.get("/login/oidc")
            assert answer.status_code == 503 and "X503390OIDDWN" in answer.text
            assert "Sign in with Test IdP" in answer.text and 'label for="token"' in answer.text


def test_over_https_the_cookies_are_secure(world: World, idp: Provider) -> None:
    app = create_app(world.database, SystemClock(), ui=True, oidc=idp.settings())
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as http:
        start = http.get("/login/oidc")
        assert "; secure" in set_cookie_header(start, FLOW_COOKIE).lower()
        done = http.get(approve(start.headers["location"], "zz-edith"))
        assert done.status_code == 303, done.text
        assert "; secure" in set_cookie_header(done, OIDC_COOKIE).lower()


def test_a_sign_in_the_user_declined_at_the_provider_is_refused(client: httpx.Client) -> None:
    location = begin(client)
    state = dict(parse_qsl(urlsplit(location).query))["state"]
    answer = client.get("/login/oidc/callback", params={"state": state, "error": "access_denied"})
    refused(answer, client, "X401390OIDREJ")
    assert "the provider refused the sign-in (access_denied)" in answer.text
