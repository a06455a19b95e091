"""CRONPLANE_OIDC_* (settings.oidc_settings): unset is tokens only; a bad or missing one
is X400390OIDCFG naming the variable, so `serve` stops at start-up; and the sealed cookies
(ui.oidc_session): expiry, tampering, and one seal's cookie not opening as another's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cronplane.core.access import Role
from cronplane.core.grants import Grant
from cronplane.errors import InvalidOidcSettings, OidcNoRole
from cronplane.settings import oidc_settings
from cronplane.ui.oidc import identity_of
from cronplane.ui.oidc_session import OidcIdentity, OidcSignIn, actor_name

GOOD = {
    "CRONPLANE_OIDC_ISSUER": "https://login.example.test/realms/ops",
    "CRONPLANE_OIDC_CLIENT_ID": "cronplane",
    "CRONPLANE_OIDC_CLIENT_SECRET": "s3cret",
    "CRONPLANE_OIDC_ROLE_MAP": "ops=*:admin",
    "CRONPLANE_SECRET_KEY": "k" * 32,
}
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def test_unset_issuer_means_tokens_only() -> None:
    assert oidc_settings({}) is None


def test_good_settings_and_their_defaults() -> None:
    found = oidc_settings(GOOD)
    assert found is not None
    assert found.roles_claim == "groups" and found.session_hours == 8
    assert found.shown_name == "login.example.test"
    assert found.role_map.entries == (("ops", Grant(None, Role.ADMIN)),)
    assert "s3cret" not in repr(found) and "kkkk" not in repr(found)
    named = oidc_settings({**GOOD, "CRONPLANE_OIDC_PROVIDER_NAME": "Okta"})
    assert named is not None and named.shown_name == "Okta"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"CRONPLANE_OIDC_CLIENT_ID": ""}, "CRONPLANE_OIDC_CLIENT_ID"),
        ({"CRONPLANE_OIDC_CLIENT_SECRET": " "}, "CRONPLANE_OIDC_CLIENT_SECRET"),
        ({"CRONPLANE_OIDC_ROLE_MAP": ""}, "CRONPLANE_OIDC_ROLE_MAP"),
        ({"CRONPLANE_OIDC_ROLE_MAP": "ops=admin"}, "CRONPLANE_OIDC_ROLE_MAP"),
        ({"CRONPLANE_SECRET_KEY": ""}, "CRONPLANE_SECRET_KEY"),
        ({"CRONPLANE_SECRET_KEY": "short"}, "CRONPLANE_SECRET_KEY"),
        ({"CRONPLANE_OIDC_ISSUER": "http://login.example.test"}, "CRONPLANE_OIDC_ISSUER"),
        ({"CRONPLANE_OIDC_ISSUER": "login.example.test"}, "CRONPLANE_OIDC_ISSUER"),
        ({"CRONPLANE_OIDC_SESSION_HOURS": "0"}, "CRONPLANE_OIDC_SESSION_HOURS"),
        ({"CRONPLANE_OIDC_SESSION_HOURS": "25"}, "CRONPLANE_OIDC_SESSION_HOURS"),
        ({"CRONPLANE_OIDC_SESSION_HOURS": "eight"}, "CRONPLANE_OIDC_SESSION_HOURS"),
        ({"CRONPLANE_OIDC_REDIRECT_URL": "ftp://x/cb"}, "CRONPLANE_OIDC_REDIRECT_URL"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(changes: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidOidcSettings) as refused:
        oidc_settings({**GOOD, **changes})
    assert refused.value.detail["field"] == field


def test_http_is_allowed_on_a_loopback_issuer_only() -> None:
    local = oidc_settings({**GOOD, "CRONPLANE_OIDC_ISSUER": "http://127.0.0.1:9000/"})
    assert local is not None and local.issuer == "http://127.0.0.1:9000/"  # kept as written


def identity(expires: datetime) -> OidcIdentity:
    return OidcIdentity("sub-1", "a@example.test", "A", (Grant("t", Role.VIEWER),), expires)


def test_a_session_cookie_opens_until_it_expires() -> None:
    settings = oidc_settings(GOOD)
    assert settings is not None
    sign_in = OidcSignIn(settings)
    sealed = sign_in.seal_identity(identity(NOW + timedelta(minutes=10)), NOW)
    assert sign_in.identity(sealed, NOW + timedelta(minutes=9)) == identity(
        NOW + timedelta(minutes=10)
    )
    assert sign_in.identity(sealed, NOW + timedelta(minutes=10)) is None
    # Past the session's hours, whatever the identity says.
    long = sign_in.seal_identity(identity(NOW + timedelta(days=2)), NOW)
    assert sign_in.identity(long, NOW + timedelta(hours=7)) is not None
    assert sign_in.identity(long, NOW + timedelta(hours=8, seconds=1)) is None


def test_a_cookie_from_another_key_or_another_use_does_not_open() -> None:
    settings = oidc_settings(GOOD)
    other = oidc_settings({**GOOD, "CRONPLANE_SECRET_KEY": "o" * 32})
    assert settings is not None and other is not None
    sign_in, elsewhere = OidcSignIn(settings), OidcSignIn(other)
    sealed = sign_in.seal_identity(identity(NOW + timedelta(hours=1)), NOW)
    assert elsewhere.identity(sealed, NOW) is None
    flow = sign_in.seal_flow({"state": "s"}, NOW)
    assert sign_in.flow(flow, NOW) == {"state": "s"}
    assert sign_in.identity(flow, NOW) is None  # a flow cookie is no session
    assert sign_in.flow(sealed, NOW) is None
    assert sign_in.flow(flow, NOW + timedelta(minutes=11)) is None


def test_the_actor_is_the_verified_email_else_the_subject() -> None:
    assert actor_name({"sub": "s1", "email": "a@example.test"}) == "a@example.test"
    assert actor_name({"sub": "s1", "email": "a@example.test", "email_verified": False}) == "s1"
    assert actor_name({"sub": "s1"}) == "s1"


def test_the_roles_claim_may_be_a_string_or_a_dotted_path() -> None:
    keycloak = oidc_settings(
        {
            **GOOD,
            "CRONPLANE_OIDC_ROLES_CLAIM": "realm_access.roles",
            "CRONPLANE_OIDC_ROLE_MAP": "ops=t:editor",
        }
    )
    assert keycloak is not None
    exp = int((NOW + timedelta(minutes=5)).timestamp())
    claims = {"sub": "s1", "exp": exp, "realm_access": {"roles": ["x", "ops"]}}
    found = identity_of(OidcSignIn(keycloak), claims, NOW)
    assert found.grants == (Grant("t", Role.EDITOR),) and found.display == "s1"
    assert found.expires == NOW + timedelta(minutes=5)  # the ID token's end, before 8 h
    single = oidc_settings({**GOOD, "CRONPLANE_OIDC_ROLES_CLAIM": "role"})
    assert single is not None
    far = int((NOW + timedelta(days=1)).timestamp())
    one = identity_of(OidcSignIn(single), {"sub": "s", "exp": far, "role": "ops"}, NOW)
    assert one.grants == (Grant(None, Role.ADMIN),)
    assert one.expires == NOW + timedelta(hours=8)  # the session's hours, before the token's
    with pytest.raises(OidcNoRole):
        identity_of(OidcSignIn(single), {"sub": "s", "exp": far, "role": []}, NOW)
