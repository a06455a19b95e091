"""The OIDC role map (core.grants): its syntax, its refusals, and which Principal a user's
grants make in the tenant viewed."""

from __future__ import annotations

import pytest

from cronplane.core.access import Role
from cronplane.core.grants import (
    Grant,
    default_tenant,
    parse_role_map,
    principal_for,
    tenants_of,
)
from cronplane.errors import InvalidOidcSettings


def test_the_syntax_value_equals_tenant_colon_role() -> None:
    mapped = parse_role_map(
        " payments-admins = payments:admin ,platform-ops=*:ADMIN,, support=payments:viewer,"
        "support=billing:operator"
    )
    assert mapped.entries == (
        ("payments-admins", Grant("payments", Role.ADMIN)),
        ("platform-ops", Grant(None, Role.ADMIN)),
        ("support", Grant("payments", Role.VIEWER)),
        ("support", Grant("billing", Role.OPERATOR)),
    )
    assert mapped.grants_for(["support", "other"]) == (
        Grant("payments", Role.VIEWER),
        Grant("billing", Role.OPERATOR),
    )
    assert mapped.grants_for(["nothing"]) == ()
    assert Grant(None, Role.ADMIN).text == "*:admin"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", "no entry"),
        ("  ,  ", "no entry"),
        ("admins", "VALUE=TENANT:ROLE"),
        ("admins=payments", "VALUE=TENANT:ROLE"),
        ("=payments:admin", "VALUE=TENANT:ROLE"),
        ("admins=:admin", "VALUE=TENANT:ROLE"),
        ("admins=payments:owner", "role 'owner' is unknown"),
        ("admins=pay ments:admin", "admins=pay ments:admin"),
    ],
)
def test_a_bad_map_is_refused_naming_the_entry(text: str, names: str) -> None:
    with pytest.raises(InvalidOidcSettings) as refused:
        parse_role_map(text)
    assert names in refused.value.message
    assert refused.value.detail == {"field": "CRONPLANE_OIDC_ROLE_MAP"}
    assert refused.value.code.text == "X400390OIDCFG"


def test_the_strongest_grant_covering_the_tenant_acts() -> None:
    grants = (
        Grant("payments", Role.VIEWER),
        Grant(None, Role.OPERATOR),
        Grant("billing", Role.ADMIN),
    )
    payments = principal_for(grants, "payments", "a@example.test")
    assert payments is not None
    assert (payments.tenant, payments.role) == (None, Role.OPERATOR)  # the platform grant
    assert payments.actor == "oidc:a@example.test" and payments.token_id is None
    billing = principal_for(grants, "billing", "a")
    assert billing is not None and (billing.tenant, billing.role) == ("billing", Role.ADMIN)
    elsewhere = principal_for(grants, "anything", "a")
    assert elsewhere is not None and elsewhere.is_platform
    # Equal roles: the platform grant, so the Tenants page stays reachable.
    tie = principal_for((Grant("x", Role.VIEWER), Grant(None, Role.VIEWER)), "x", "a")
    assert tie is not None and tie.is_platform


def test_a_tenant_grant_covers_only_its_tenant() -> None:
    grants = (Grant("payments", Role.EDITOR), Grant("billing", Role.VIEWER))
    assert principal_for(grants, "shop", "a") is None
    assert principal_for(grants, "", "a") is None
    assert default_tenant(grants) == "payments"
    assert tenants_of(grants) == ("payments", "billing")
    assert default_tenant((Grant(None, Role.VIEWER),)) == ""
