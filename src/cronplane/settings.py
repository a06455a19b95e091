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
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass

from cronplane.core.model import DEFAULT_SCOPE_PART, Scope
from cronplane.core.outbound import ALLOW_VARIABLE, OutboundPolicy, parse_allow
from cronplane.core.python_targets import VARIABLE as PYTHON_TARGETS_VARIABLE
from cronplane.core.python_targets import parse_prefixes
from cronplane.core.quotas import Quota, checked_limits
from cronplane.errors import InvalidRequest

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
