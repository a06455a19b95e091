"""Who may do what: roles, permissions and the one access check (SPEC §10). Pure.

A credential (an API token) carries a *role* and a *tenant*; a tenant of
None is a platform credential that spans every tenant. Each request names the
tenant it is about and one *action*; the action needs a set of permissions
and the role grants a set. The check runs in this order, and the order is the
security property:

1. the tenant must be the credential's own (or the credential a platform
   one); otherwise :class:`TenantNotFound` — the same answer whether the
   other tenant exists or not, so a request about another tenant's rows
   learns nothing;
2. the role must grant every permission the action needs; otherwise
   :class:`Forbidden` (the caller may know its own role's limits).

The matrix (docs/security.md renders the same table)::

    permission   viewer  operator  editor  admin
    READ           x        x        x       x
    TOGGLE                  x        x       x     enable / disable
    RUN                     x        x       x     its own permission (not CREATE)
    CREATE                           x       x
    UPDATE                           x       x
    DELETE                                   x

OWNER and ADMIN of the spec are the one broad grant, ``admin``. TOGGLE is the
operator's narrow write: flipping ``enabled`` without touching anything else;
UPDATE includes it (an editor may also enable and disable).

A ``command:`` job makes the worker run a shell command on its host, which no
tenant may ask for: creating one, or changing its command or options, needs a
*platform admin* (a platform credential with the admin role) and an
installation that enabled command targets (:func:`check_command_job`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from uuid import UUID

from cronplane.errors import (
    CommandJobForbidden,
    CommandTargetsOff,
    Forbidden,
    InvalidRequest,
    TenantNotFound,
)


class Permission(enum.Enum):
    """What a role may grant."""

    READ = "READ"
    TOGGLE = "TOGGLE"
    RUN = "RUN"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


class Role(enum.Enum):
    """The roles a token may carry, narrowest first."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    EDITOR = "editor"
    ADMIN = "admin"


_P = Permission
GRANTS: Final[Mapping[Role, frozenset[Permission]]] = {
    Role.VIEWER: frozenset({_P.READ}),
    Role.OPERATOR: frozenset({_P.READ, _P.TOGGLE, _P.RUN}),
    Role.EDITOR: frozenset({_P.READ, _P.TOGGLE, _P.RUN, _P.CREATE, _P.UPDATE}),
    Role.ADMIN: frozenset(Permission),
}


class Action(enum.Enum):
    """Everything a request can do to a tenant's rows; each needs some permissions."""

    READ = "read"  # list, get, history, preview, queue items, events, sync dry-run
    CREATE = "create"  # create a schedule, register a job
    UPDATE = "update"  # change a schedule or job, reset to manifest
    TOGGLE = "toggle"  # enable, disable
    DELETE = "delete"  # remove a schedule, deactivate a job
    RUN = "run"  # run now
    SYNC = "sync"  # apply an app manifest: creates, updates and removes app rows
    PROMOTE = "promote"  # apply one environment's definitions to another: creates, updates
    USE = "use"  # tenant-free helpers (cron/explain): any valid credential
    TENANTS = "tenants"  # platform credentials only: tenants' usage and quotas
    QUOTA = "quota"  # platform admins only: set a tenant's quota


NEEDS: Final[Mapping[Action, frozenset[Permission]]] = {
    Action.READ: frozenset({_P.READ}),
    Action.CREATE: frozenset({_P.CREATE}),
    Action.UPDATE: frozenset({_P.UPDATE}),
    # Every role that may UPDATE also holds TOGGLE (GRANTS), so one permission suffices here.
    Action.TOGGLE: frozenset({_P.TOGGLE}),
    Action.DELETE: frozenset({_P.DELETE}),
    Action.RUN: frozenset({_P.RUN}),
    # A sync may remove rows, so it needs everything a hand-made equivalent would.
    Action.SYNC: frozenset({_P.CREATE, _P.UPDATE, _P.DELETE}),
    # A promote creates and updates rows, never removes one: an editor's.
    Action.PROMOTE: frozenset({_P.CREATE, _P.UPDATE}),
    Action.USE: frozenset(),
    Action.TENANTS: frozenset({_P.READ}),
    Action.QUOTA: frozenset(Permission),
}
# Actions over the platform itself: a tenant's credential never has them (403).
PLATFORM_ONLY: Final = frozenset({Action.TENANTS, Action.QUOTA})


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller: which token, whose tenant, what role.

    `via` is how it signed in: `token` (an API token named `name`) or `oidc` (a console
    user of the OIDC provider, `name` their e-mail or subject; `token_id` None).
    """

    token_id: UUID | None
    tenant: str | None  # None: a platform credential spanning tenants
    role: Role
    name: str
    via: str = "token"

    @property
    def is_platform(self) -> bool:
        """True when the credential spans every tenant."""
        return self.tenant is None

    @property
    def actor(self) -> str:
        """How events record this caller."""
        return f"{self.via}:{self.name}"


def parse_role(text: str) -> Role:
    """The Role named `text` (case-insensitive); InvalidRequest listing the roles otherwise."""
    try:
        return Role(text.strip().lower())
    except ValueError:
        names = ", ".join(role.value for role in Role)
        raise InvalidRequest(
            f"role {text!r} is unknown: use one of {names}", {"field": "role"}
        ) from None


def permissions(role: Role) -> frozenset[Permission]:
    """What `role` grants."""
    return GRANTS[role]


# What a platform-only action does, for a refusal a person reads.
_PLATFORM_WORDS: Final = {
    Action.TENANTS: "see tenants and their usage",
    Action.QUOTA: "set a tenant's quota",
}


def permits(role: Role, action: Action) -> bool:
    """True when `role` grants every permission `action` needs."""
    return NEEDS[action] <= GRANTS[role]


def sees(principal: Principal, tenant: str) -> bool:
    """True when the credential covers `tenant`."""
    return principal.tenant is None or principal.tenant == tenant


def check(principal: Principal, tenant: str | None, action: Action) -> None:
    """Raise unless `principal` may do `action` in `tenant` (None: no tenant involved).

    Tenant first, then role: another tenant is TenantNotFound even for a role
    that could not have done the action anyway, so the answer never depends on
    what the other tenant holds. A platform-only action is refused to a tenant's
    credential first (403, whichever tenant it names: it reveals none).
    """
    if action in PLATFORM_ONLY and not principal.is_platform:
        raise Forbidden(
            f"only a platform token may {_PLATFORM_WORDS[action]}: this token is tenant "
            f"{principal.tenant}'s",
            {"action": action.value, "tenant": principal.tenant},
        )
    if tenant is not None and not sees(principal, tenant):
        raise TenantNotFound(f"tenant {tenant!r} not found", {"tenant": tenant})
    if not permits(principal.role, action):
        missing = sorted(p.value for p in NEEDS[action] - GRANTS[principal.role])
        raise Forbidden(
            f"role {principal.role.value} may not {action.value}: needs {', '.join(missing)}",
            {"role": principal.role.value, "action": action.value, "missing": missing},
        )


COMMAND_KIND: Final = "command"
# The kinds that run what the job names on a worker's host (a shell line, an image): one
# switch and one rule for both.
HOST_KINDS: Final = (COMMAND_KIND, "container")


def host_kind(target: str) -> str | None:
    """`command` or `container` for a target of that kind; None for the others."""
    kind = target.partition(":")[0]
    return kind if kind in HOST_KINDS else None


def is_platform_admin(principal: Principal) -> bool:
    """True for a platform credential (no tenant) with the admin role."""
    return principal.is_platform and principal.role is Role.ADMIN


def check_command_job(
    principal: Principal | None,
    *,
    enabled: bool,
    local_admin: bool,
    field: str = "target",
    kind: str = COMMAND_KIND,
) -> None:
    """Raise unless a `command:` (or `container:`, `kind`) job may be created or changed by
    this caller.

    `enabled`: the installation's switch (CRONPLANE_ALLOW_COMMAND_TARGETS);
    `principal` None is a caller without a credential, a platform admin only
    when `local_admin` (a process holding the database: the local CLI), never
    over the API. The switch is judged first: while it is off nobody may.
    `field` is what the refused write changed (`target`, or `options` alone), for the detail.
    """
    if not enabled:
        raise CommandTargetsOff(
            f"{kind}: targets are off in this installation: set "
            "CRONPLANE_ALLOW_COMMAND_TARGETS=1 on its servers and workers to allow them",
            {"field": field},
        )
    if principal is None and local_admin:
        return
    if principal is None or not is_platform_admin(principal):
        shown = "no credential" if principal is None else f"role {principal.role.value}"
        scope = (
            "" if principal is None or principal.is_platform else f" of tenant {principal.tenant}"
        )
        raise CommandJobForbidden(
            f"only a platform admin may create or change a {kind}: job ({shown}{scope})",
            {"field": field},
        )
