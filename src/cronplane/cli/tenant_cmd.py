"""`cronplane tenant ls|show|set-quota`: tenants' usage against their quotas (platform admins).

Locally (the database URL is the root of trust) every command is allowed;
through `--url` the token must be a platform token (a tenant's token: exit 6),
and `set-quota` a platform admin's.
"""

from __future__ import annotations

import click

from cronplane.cli import render
from cronplane.cli.options import client, every_shard, json_option, scope_options, settings
from cronplane.core.quotas import QUOTA_FIELDS
from cronplane.errors import InvalidRequest

COUNT = click.IntRange(min=0)

# --max-schedules … : one option per limit, named after it.
_OPTIONS = {name: "--" + name.replace("_", "-") for name in QUOTA_FIELDS}


@click.group()
@scope_options
def tenant() -> None:
    """Tenants: usage against quotas, and setting a tenant's quota (platform admins)."""


@tenant.command("ls")
@json_option
@scope_options
@click.pass_context
def ls(ctx: click.Context, as_json: bool) -> None:
    """Every tenant with a schedule, a job or a quota: usage against its quota."""
    from cronplane.service.shards import every_tenant

    render.tenants(every_tenant(every_shard(ctx)), as_json)


@tenant.command("show")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Tenant NAME: schedules, jobs, fires in the last hour, queue depth, against its quota."""
    render.tenant(client(ctx, tenant=name).tenant_usage(name), as_json)


@tenant.command("set-quota")
@click.argument("name")
@click.option(
    "--clear",
    "clear",
    multiple=True,
    type=click.Choice(QUOTA_FIELDS),
    help="Return this limit to the platform's default (repeatable).",
)
@click.option("--max-schedules", type=COUNT, default=None, help="Schedules the tenant may hold.")
@click.option("--max-jobs", type=COUNT, default=None, help="Jobs the tenant may hold.")
@click.option(
    "--min-interval",
    type=click.IntRange(min=1),
    default=None,
    help="Seconds between two fires of one schedule, at least (replaces the platform's).",
)
@click.option(
    "--max-fires-per-minute", type=COUNT, default=None, help="Scheduled fires per clock minute."
)
@click.option("--max-queued", type=COUNT, default=None, help="Items waiting to run, at most.")
@json_option
@scope_options
@click.pass_context
def set_quota(
    ctx: click.Context,
    name: str,
    clear: tuple[str, ...],
    max_schedules: int | None,
    max_jobs: int | None,
    min_interval: int | None,
    max_fires_per_minute: int | None,
    max_queued: int | None,
    as_json: bool,
) -> None:
    """Set (or --clear) limits of tenant NAME; the others stay as they are."""
    limits = {
        "max_schedules": max_schedules,
        "max_jobs": max_jobs,
        "min_interval": min_interval,
        "max_fires_per_minute": max_fires_per_minute,
        "max_queued": max_queued,
    }
    given = {key: value for key, value in limits.items() if value is not None}
    if not given and not clear:
        flags = ", ".join(_OPTIONS.values())
        raise InvalidRequest(f"nothing to set: give one of {flags}, or --clear NAME")
    s = settings(ctx)
    service = client(ctx, writes=True, tenant=name)
    usage = service.set_quota(name, given, clear=tuple(clear), actor=s.actor)
    render.tenant(usage, as_json)
