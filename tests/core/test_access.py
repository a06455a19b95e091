"""The role x permission matrix and the order of the access check (pure)."""

from __future__ import annotations

import itertools
import uuid

import pytest

from cronplane.core.access import (
    GRANTS,
    NEEDS,
    Action,
    Permission,
    Principal,
    Role,
    check,
    parse_role,
    permits,
)
from cronplane.errors import Forbidden, InvalidRequest, TenantNotFound

# The matrix as the issue states it, written out independently of GRANTS. (Reading
# tenants needs READ, setting a quota everything; both need a platform token too.)
EXPECTED = {
    Role.VIEWER: {Action.READ, Action.USE, Action.TENANTS},
    Role.OPERATOR: {Action.READ, Action.USE, Action.RUN, Action.TOGGLE, Action.TENANTS},
    Role.EDITOR: {
        Action.READ,
        Action.USE,
        Action.RUN,
        Action.TOGGLE,
        Action.CREATE,
        Action.UPDATE,
        Action.PROMOTE,
        Action.TENANTS,
    },
    Role.ADMIN: set(Action),
}


def principal(role: Role, tenant: str | None = "acme") -> Principal:
    return Principal(token_id=uuid.uuid4(), tenant=tenant, role=role, name="t")


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("action", list(Action))
def test_matrix(role: Role, action: Action) -> None:
    assert permits(role, action) == (action in EXPECTED[role])


def test_run_is_its_own_permission_not_create() -> None:
    assert Permission.RUN in GRANTS[Role.OPERATOR]
    assert Permission.CREATE not in GRANTS[Role.OPERATOR]
    assert NEEDS[Action.RUN] == {Permission.RUN}


def test_roles_are_nested() -> None:
    order = list(Role)
    for narrow, broad in itertools.pairwise(order):
        assert GRANTS[narrow] <= GRANTS[broad]


def test_other_tenant_is_not_found_before_forbidden() -> None:
    with pytest.raises(TenantNotFound):
        check(principal(Role.VIEWER), "other", Action.DELETE)
    with pytest.raises(TenantNotFound):
        check(principal(Role.ADMIN), "other", Action.READ)


def test_own_tenant_lacking_permission_is_forbidden() -> None:
    with pytest.raises(Forbidden) as caught:
        check(principal(Role.OPERATOR), "acme", Action.DELETE)
    assert caught.value.detail["missing"] == ["DELETE"]


def test_platform_principal_spans_tenants() -> None:
    admin = principal(Role.ADMIN, tenant=None)
    check(admin, "acme", Action.DELETE)
    check(admin, "globex", Action.SYNC)
    with pytest.raises(Forbidden):
        check(principal(Role.VIEWER, tenant=None), "acme", Action.CREATE)


def test_tenant_free_action_needs_only_a_credential() -> None:
    check(principal(Role.VIEWER), None, Action.USE)


def test_parse_role() -> None:
    assert parse_role(" Editor ") is Role.EDITOR
    with pytest.raises(InvalidRequest):
        parse_role("owner-ish")


@pytest.mark.parametrize("role", list(Role))
def test_platform_only_actions_refuse_every_tenant_token(role: Role) -> None:
    for action, tenant in itertools.product((Action.TENANTS, Action.QUOTA), ("acme", "globex")):
        with pytest.raises(Forbidden):
            check(principal(role, "acme"), tenant, action)
        if permits(role, action):
            check(principal(role, None), tenant, action)
