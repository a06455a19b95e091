"""What an OIDC user may do: the role map from claim values to (tenant, role) grants. Pure.

The map is CRONPLANE_OIDC_ROLE_MAP, comma-separated entries ``VALUE=TENANT:ROLE``::

    payments-admins=payments:admin, platform-ops=*:admin, support=payments:viewer

- VALUE is one value of the roles claim (CRONPLANE_OIDC_ROLES_CLAIM, e.g. a group
  name); it may not contain ``=`` or ``,``, and spaces around it are dropped;
- TENANT is a tenant name, or ``*`` for the platform (every tenant, and the
  Tenants page: what a platform token grants);
- ROLE is viewer, operator, editor or admin;
- one VALUE may appear in several entries (one group, several tenants).

A user's grants are the entries whose VALUE the user's claim holds. In the tenant a
session views, the user acts with the strongest grant covering it (a platform grant
covers every tenant; between equal roles the platform grant wins, so the Tenants page
stays reachable). No grant at all: the user is refused (OidcNoRole), not signed in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from cronplane.core.access import Principal, Role, parse_role
from cronplane.core.validation import validate_name
from cronplane.errors import CronplaneError, InvalidOidcSettings

PLATFORM: Final = "*"
ROLE_MAP_VARIABLE: Final = "CRONPLANE_OIDC_ROLE_MAP"
_RANK: Final = {role: rank for rank, role in enumerate(Role)}


@dataclass(frozen=True, slots=True, order=True)
class Grant:
    """One (tenant, role) a user holds; tenant None: the platform."""

    tenant: str | None
    role: Role

    @property
    def text(self) -> str:
        """`tenant:role` (`*:role` for the platform), as the role map spells it."""
        return f"{self.tenant or PLATFORM}:{self.role.value}"


@dataclass(frozen=True, slots=True)
class RoleMap:
    """The parsed role map: (claim value, grant) pairs in the order written."""

    entries: tuple[tuple[str, Grant], ...]

    def grants_for(self, values: Iterable[str]) -> tuple[Grant, ...]:
        """The grants of a user whose roles claim holds `values` (no duplicates, map order)."""
        held = set(values)
        found: list[Grant] = []
        for value, grant in self.entries:
            if value in held and grant not in found:
                found.append(grant)
        return tuple(found)


def _bad(message: str) -> InvalidOidcSettings:
    return InvalidOidcSettings(f"{ROLE_MAP_VARIABLE}: {message}", {"field": ROLE_MAP_VARIABLE})


def parse_role_map(text: str) -> RoleMap:
    """`VALUE=TENANT:ROLE, …` → RoleMap; InvalidOidcSettings naming the bad entry."""
    entries: list[tuple[str, Grant]] = []
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        value, equals, target = entry.partition("=")
        tenant, colon, role_text = target.strip().rpartition(":")
        value, tenant = value.strip(), tenant.strip()
        if not equals or not colon or not value or not tenant:
            raise _bad(f"{entry[:80]!r} is not VALUE=TENANT:ROLE (TENANT * for the platform)")
        try:
            role = parse_role(role_text)
            if tenant != PLATFORM:
                validate_name(tenant, "tenant")
        except CronplaneError as error:
            raise _bad(f"{entry[:80]!r}: {error.message}") from error
        entries.append((value, Grant(None if tenant == PLATFORM else tenant, role)))
    if not entries:
        raise _bad("no entry: without one nobody could sign in")
    return RoleMap(tuple(entries))


def default_tenant(grants: Iterable[Grant]) -> str:
    """The tenant a new session views: the first tenant grant's; "" with platform grants
    only (chosen on the Tenants page, as a platform token's session does)."""
    return next((grant.tenant for grant in grants if grant.tenant is not None), "")


def tenants_of(grants: Iterable[Grant]) -> tuple[str, ...]:
    """The tenants named by tenant grants, in order (a header switches between them)."""
    found: list[str] = []
    for grant in grants:
        if grant.tenant is not None and grant.tenant not in found:
            found.append(grant.tenant)
    return tuple(found)


def principal_for(grants: Iterable[Grant], tenant: str, name: str) -> Principal | None:
    """The Principal a user with `grants` acts as in `tenant` ("" none chosen: platform
    grants only); None when no grant covers it."""
    covering = [g for g in grants if g.tenant is None or (tenant and g.tenant == tenant)]
    if not covering:
        return None
    # Strongest role first; between equals the platform grant (tenant None sorts first).
    best = max(covering, key=lambda g: (_RANK[g.role], g.tenant is None))
    return Principal(None, best.tenant, best.role, name, via="oidc")
