"""Configuration from flags and CRONPLANE_* environment variables.

| setting      | flag       | variable                 | default                  |
|--------------|------------|--------------------------|--------------------------|
| database_url | `--db`     | CRONPLANE_DATABASE_URL   | `sqlite:///cronplane.db` |
| tenant       | `--tenant` | CRONPLANE_TENANT         | `default`                |
| stack        | `--stack`  | CRONPLANE_STACK          | `default`                |
| environment  | `--env`    | CRONPLANE_ENV            | `default`                |
| actor        | —          | CRONPLANE_ACTOR          | `cli:<login name>`       |
| min_interval | —          | CRONPLANE_MIN_INTERVAL   | `1` (seconds)            |
| —            | —          | CRONPLANE_ALLOW_COMMAND_TARGETS | off (`1` enables) |
| —            | —          | CRONPLANE_PYTHON_TARGETS | `demo_jobs` (module prefixes; empty: none) |
| quota defaults | —        | CRONPLANE_QUOTA_MAX_SCHEDULES, …_MAX_JOBS, …_MAX_FIRES_PER_MINUTE, …_MAX_QUEUED | unlimited |
| —            | —          | CRONPLANE_METRICS_TENANT_LABEL | off (`1` adds per-tenant series) |
| —            | —          | CRONPLANE_METRICS_TOKEN  | unset: `/metrics` is public |
| —            | —          | CRONPLANE_OUTBOUND_ALLOW | public addresses only |
| —            | —          | CRONPLANE_LISTEN_URL     | unset: LISTEN on the database URL, none through PgBouncer |
| —            | —          | CRONPLANE_READ_URL       | unset: every read on the database URL |
| —            | —          | CRONPLANE_SHARDS, CRONPLANE_SHARDS_FILE | unset: one shard, the database URL's |
| —            | —          | CRONPLANE_OIDC_ISSUER, …_CLIENT_ID, …_CLIENT_SECRET, …_ROLE_MAP | unset: console sign-in by token only |
| —            | —          | CRONPLANE_OIDC_ROLES_CLAIM, …_PROVIDER_NAME, …_SCOPES, …_SESSION_HOURS, …_REDIRECT_URL | `groups`, the issuer's host, `openid email profile`, `8`, this server's callback |

A flag wins over its variable; the variable wins over the default.
A CRONPLANE_LISTEN_URL that does not parse, or names another database than
PostgreSQL, is X400009DBUNSP (store.dialects.conninfo): the processes refuse to start.
`CRONPLANE_READ_URL` (:func:`read_url_setting`) names a read-only replica the API and
console read their listings and history from, where an answer a moment stale is fine
(docs/operations.md, "A read replica"); nothing the dispatcher, a worker or a write
decides reads it.
`min_interval` is the installation's shortest allowed schedule interval: a
create, update or sync of a cron that fires more often is refused
(X400010INTMIN); rows already stored are left as they are.
`CRONPLANE_ALLOW_COMMAND_TARGETS=1` lets platform admins create `command:`
jobs and lets workers run them (:func:`command_targets_enabled`); read by the
service and the worker where they are made.
The `CRONPLANE_QUOTA_*` variables are the platform's default tenant quotas
(:func:`quota_defaults`, core.quotas); the minimum interval's default is
`CRONPLANE_MIN_INTERVAL`. Read where the service and the dispatcher are made.
`CRONPLANE_OUTBOUND_ALLOW` (:func:`outbound_policy`, core.outbound) adds CIDRs and
host names to the public addresses webhooks and alert channels may connect to.
The `CRONPLANE_OIDC_*` variables (:func:`oidc_settings`) add "Sign in with <provider>" to
the console (cronplane.ui.oidc, docs/security.md); a bad one is X400390OIDCFG at start-up.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from cronplane.core.grants import ROLE_MAP_VARIABLE, RoleMap, parse_role_map
from cronplane.core.model import DEFAULT_SCOPE_PART, Scope
from cronplane.core.outbound import ALLOW_VARIABLE, OutboundPolicy, parse_allow
from cronplane.core.python_targets import VARIABLE as PYTHON_TARGETS_VARIABLE
from cronplane.core.python_targets import parse_prefixes
from cronplane.core.quotas import Quota, checked_limits
from cronplane.core.shards import Shard, parse_shards
from cronplane.errors import InvalidOidcSettings, InvalidRequest, InvalidShard

# The store's default, spelled here so reading settings imports no database driver
# (store.database.DEFAULT_URL is this same value).
DEFAULT_URL = "sqlite:///cronplane.db"
DEFAULT_MIN_INTERVAL = 1


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the CLI works: which database, which scope, and who it acts as."""

    database_url: str = DEFAULT_URL
    tenant: str = DEFAULT_SCOPE_PART
    stack: str = DEFAULT_SCOPE_PART
    environment: str = DEFAULT_SCOPE_PART
    actor: str = "cli"
    min_interval: int = DEFAULT_MIN_INTERVAL

    @property
    def scope(self) -> Scope:
        """(tenant, stack, environment)."""
        return Scope(self.tenant, self.stack, self.environment)


def default_actor() -> str:
    """`cli:<login name>`, or `cli` where there is no login name (containers)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def min_interval_from(text: str | None) -> int:
    """CRONPLANE_MIN_INTERVAL as whole seconds >= 1 (unset: 1); InvalidRequest otherwise,
    so a typo stops the process instead of silently allowing every interval."""
    if text is None or not text.strip():
        return DEFAULT_MIN_INTERVAL
    value = text.strip()
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise InvalidRequest(
            f"CRONPLANE_MIN_INTERVAL must be whole seconds >= 1, not {value[:40]!r}",
            {"field": "CRONPLANE_MIN_INTERVAL"},
        )
    return int(value)


COMMAND_TARGETS_VARIABLE = "CRONPLANE_ALLOW_COMMAND_TARGETS"


def command_targets_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether CRONPLANE_ALLOW_COMMAND_TARGETS is `1` (or true/yes/on): off by default, so a
    worker runs no shell command unless its installation said so."""
    env = os.environ if environ is None else environ
    return env.get(COMMAND_TARGETS_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def version_retention_days(environ: Mapping[str, str] | None = None) -> int:
    """CRONPLANE_VERSION_RETENTION: days a schedule or job version is kept (default 400;
    each live row's or job's last 20 are kept however old); ValueError unless a whole
    number >= 1."""
    env = os.environ if environ is None else environ
    text = env.get("CRONPLANE_VERSION_RETENTION", "").strip()
    days = int(text) if text else 400
    if days < 1:
        raise ValueError("CRONPLANE_VERSION_RETENTION must be at least one day")
    return days


def python_target_prefixes(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The module prefixes `python:` targets may name (CRONPLANE_PYTHON_TARGETS, read by the
    service and the worker where they are made; core.python_targets has the rule)."""
    env = os.environ if environ is None else environ
    return parse_prefixes(env.get(PYTHON_TARGETS_VARIABLE))


LISTEN_URL_VARIABLE = "CRONPLANE_LISTEN_URL"


def listen_url_setting(environ: Mapping[str, str] | None = None) -> str | None:
    """CRONPLANE_LISTEN_URL: a direct PostgreSQL connection the dispatcher LISTENs on, for a
    database URL that goes through a transaction pooler (docs/operations.md); None: unset.
    Checked, and read as libpq's connection string, by store.dialects.conninfo."""
    env = os.environ if environ is None else environ
    return env.get(LISTEN_URL_VARIABLE, "").strip() or None


READ_URL_VARIABLE = "CRONPLANE_READ_URL"


def read_url_setting(environ: Mapping[str, str] | None = None) -> str | None:
    """CRONPLANE_READ_URL: a read-only replica of the database for the API's and the
    console's listings and history (store.database.read_replica); None: unset."""
    env = os.environ if environ is None else environ
    return env.get(READ_URL_VARIABLE, "").strip() or None


SHARDS_VARIABLE = "CRONPLANE_SHARDS"
SHARDS_FILE_VARIABLE = "CRONPLANE_SHARDS_FILE"


def shards_setting(environ: Mapping[str, str] | None = None) -> list[Shard]:
    """The shards this node's configuration names (registered at start, core.shards):
    CRONPLANE_SHARDS (`name=url` entries separated by whitespace), then a YAML file
    at CRONPLANE_SHARDS_FILE with a `shards:` mapping of name to URL. None: []."""
    env = os.environ if environ is None else environ
    named = parse_shards(env.get(SHARDS_VARIABLE, ""))
    path = env.get(SHARDS_FILE_VARIABLE, "").strip()
    if path:
        named += shards_from_file(Path(path))
    return named


def shards_from_file(path: Path) -> list[Shard]:
    """A `shards:` file: a mapping of shard name to database URL."""
    from cronplane.core.yaml_bounds import load_one
    from cronplane.input_files import read_input_text

    document = load_one(read_input_text(path), str(path))
    entries = document.get("shards") if isinstance(document, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(url, str) for url in entries.values()):
        raise InvalidShard(
            f"{path}: expected `shards:` mapping each shard's name to its database URL",
            {"field": SHARDS_FILE_VARIABLE},
        )
    return parse_shards(" ".join(f"{name}={url}" for name, url in entries.items()))


def load_settings(
    flags: Mapping[str, str | None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from flags (keys db, tenant, stack, env), then variables, then defaults."""
    flags = flags or {}
    env = os.environ if environ is None else environ

    def pick(flag: str, variable: str, default: str) -> str:
        value = flags.get(flag)
        if value:
            return value
        return env.get(variable) or default

    return Settings(
        database_url=pick("db", "CRONPLANE_DATABASE_URL", DEFAULT_URL),
        tenant=pick("tenant", "CRONPLANE_TENANT", DEFAULT_SCOPE_PART),
        stack=pick("stack", "CRONPLANE_STACK", DEFAULT_SCOPE_PART),
        environment=pick("env", "CRONPLANE_ENV", DEFAULT_SCOPE_PART),
        actor=env.get("CRONPLANE_ACTOR") or default_actor(),
        min_interval=min_interval_from(env.get("CRONPLANE_MIN_INTERVAL")),
    )


# The platform's default quota per tenant: limit name → variable (unset: unlimited).
QUOTA_VARIABLES = {
    "max_schedules": "CRONPLANE_QUOTA_MAX_SCHEDULES",
    "max_jobs": "CRONPLANE_QUOTA_MAX_JOBS",
    "max_fires_per_minute": "CRONPLANE_QUOTA_MAX_FIRES_PER_MINUTE",
    "max_queued": "CRONPLANE_QUOTA_MAX_QUEUED",
}


def quota_defaults(environ: Mapping[str, str] | None = None) -> Quota:
    """Every tenant's quota unless its own row overrides a limit: the CRONPLANE_QUOTA_*
    variables (whole numbers; unset or empty: unlimited); InvalidRequest naming a bad one,
    so a typo stops the process instead of silently lifting a limit."""
    env = os.environ if environ is None else environ
    values: dict[str, int | None] = {}
    for name, variable in QUOTA_VARIABLES.items():
        text = env.get(variable, "").strip()
        if not text:
            continue
        if not text.isascii() or not text.isdigit():
            raise InvalidRequest(
                f"{variable} must be a whole number, not {text[:40]!r}", {"field": variable}
            )
        values[name] = int(text)
    return Quota(**checked_limits(values))


METRICS_TENANT_LABEL_VARIABLE = "CRONPLANE_METRICS_TENANT_LABEL"


def metrics_tenant_label(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the per-tenant series (`cronplane_tenant_*{tenant}`) are fed: off unless
    CRONPLANE_METRICS_TENANT_LABEL is `1` (or true/yes/on), since a tenant's name in a
    scrape tells whoever reads it which tenants exist (issue 33)."""
    env = os.environ if environ is None else environ
    value = env.get(METRICS_TENANT_LABEL_VARIABLE, "").strip().lower()
    return value in ("1", "true", "yes", "on")


METRICS_TOKEN_VARIABLE = "CRONPLANE_METRICS_TOKEN"


def metrics_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The bearer token `/metrics` requires (CRONPLANE_METRICS_TOKEN); None (unset or
    blank): `/metrics` answers without one."""
    env = os.environ if environ is None else environ
    value = env.get(METRICS_TOKEN_VARIABLE, "").strip()
    return value or None


def outbound_policy(environ: Mapping[str, str] | None = None) -> OutboundPolicy:
    """The addresses webhooks and alert channels may reach: public ones, plus what
    CRONPLANE_OUTBOUND_ALLOW names; InvalidRequest naming a bad entry."""
    env = os.environ if environ is None else environ
    return parse_allow(env.get(ALLOW_VARIABLE))


@dataclass(frozen=True, slots=True)
class OidcSettings:
    """Console sign-in through an OpenID Connect provider (CRONPLANE_OIDC_*), see
    :func:`oidc_settings` and docs/security.md."""

    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    role_map: RoleMap
    secret_key: bytes = field(repr=False)  # CRONPLANE_SECRET_KEY: seals the session cookie
    roles_claim: str = "groups"
    provider_name: str = ""
    scopes: str = "openid email profile"
    session_hours: float = 8.0
    redirect_url: str | None = None  # unset: this server's own /login/oidc/callback

    @property
    def shown_name(self) -> str:
        """What the sign-in button names: the setting, else the issuer's host."""
        return self.provider_name or urlsplit(self.issuer).hostname or self.issuer


OIDC_VARIABLES = {
    "issuer": "CRONPLANE_OIDC_ISSUER",
    "client_id": "CRONPLANE_OIDC_CLIENT_ID",
    "client_secret": "CRONPLANE_OIDC_CLIENT_SECRET",
    "role_map": ROLE_MAP_VARIABLE,
    "roles_claim": "CRONPLANE_OIDC_ROLES_CLAIM",
    "provider_name": "CRONPLANE_OIDC_PROVIDER_NAME",
    "scopes": "CRONPLANE_OIDC_SCOPES",
    "session_hours": "CRONPLANE_OIDC_SESSION_HOURS",
    "redirect_url": "CRONPLANE_OIDC_REDIRECT_URL",
}
MIN_SECRET_KEY_BYTES = 16  # the webhook keyring's minimum (targets.webhook.MIN_KEY_LENGTH)
MAX_SESSION_HOURS = 24.0
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _oidc_url(variable: str, text: str) -> str:
    """An https URL (http only on a loopback host: a provider run beside the server)."""
    parts = urlsplit(text)
    local = parts.scheme == "http" and parts.hostname in _LOOPBACK_HOSTS
    if not (parts.scheme == "https" or local) or not parts.hostname or parts.query:
        raise InvalidOidcSettings(
            f"{variable} must be an https URL without a query (http only on localhost), "
            f"not {text[:80]!r}",
            {"field": variable},
        )
    # Kept as written: the ID token's `iss` must equal it exactly (some end in `/`).
    return text


def oidc_settings(environ: Mapping[str, str] | None = None) -> OidcSettings | None:
    """The console's OIDC sign-in from CRONPLANE_OIDC_*; None when CRONPLANE_OIDC_ISSUER is
    unset (tokens only). InvalidOidcSettings naming the variable for a missing or bad one,
    so the server refuses to start instead of offering a sign-in that cannot work."""
    env = os.environ if environ is None else environ
    given = {name: env.get(variable, "").strip() for name, variable in OIDC_VARIABLES.items()}
    if not given["issuer"]:
        return None
    for name in ("client_id", "client_secret", "role_map"):
        if not given[name]:
            variable = OIDC_VARIABLES[name]
            raise InvalidOidcSettings(
                f"{variable} must be set when CRONPLANE_OIDC_ISSUER is", {"field": variable}
            )
    key = env.get("CRONPLANE_SECRET_KEY", "")
    if len(key.encode()) < MIN_SECRET_KEY_BYTES:
        raise InvalidOidcSettings(
            f"CRONPLANE_SECRET_KEY must be set (at least {MIN_SECRET_KEY_BYTES} bytes, the "
            "same on every node) when CRONPLANE_OIDC_ISSUER is: it seals the session cookie",
            {"field": "CRONPLANE_SECRET_KEY"},
        )
    hours_text = given["session_hours"] or "8"
    try:
        hours = float(hours_text)
    except ValueError:
        hours = -1.0
    if not 0 < hours <= MAX_SESSION_HOURS:
        variable = OIDC_VARIABLES["session_hours"]
        raise InvalidOidcSettings(
            f"{variable} must be hours in (0, {MAX_SESSION_HOURS:g}], not {hours_text[:20]!r}",
            {"field": variable},
        )
    redirect = given["redirect_url"]
    return OidcSettings(
        issuer=_oidc_url(OIDC_VARIABLES["issuer"], given["issuer"]),
        client_id=given["client_id"],
        client_secret=given["client_secret"],
        role_map=parse_role_map(given["role_map"]),
        secret_key=key.encode(),
        roles_claim=given["roles_claim"] or "groups",
        provider_name=given["provider_name"][:60],
        scopes=given["scopes"] or "openid email profile",
        session_hours=hours,
        redirect_url=_oidc_url(OIDC_VARIABLES["redirect_url"], redirect) if redirect else None,
    )
