"""`cronplane token create|ls|revoke`: API tokens, against the database directly.

Tokens are made where the database is (an operator with the database URL is
the root of trust); the API has no route that mints tokens. `create` prints
the token once, alone on the last line of stdout, so a script can take it
with `tail -n 1`.
"""

from __future__ import annotations

import getpass
import json
from typing import TYPE_CHECKING

import click

from cronplane.cli import render
from cronplane.cli.options import database, database_named, json_option, server_url
from cronplane.core.access import Role
from cronplane.errors import InvalidRequest

if TYPE_CHECKING:
    from cronplane.service.tokens import TokenService

ROLE_NAMES = [role.value for role in Role]


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no passwd entry (containers)
        return "cli"


def _service(database_url: str | None, *, writes: bool) -> TokenService:
    # Tokens are minted against the database, never through a server.
    from cronplane.clock import SystemClock
    from cronplane.service import ScheduleService

    ctx = click.get_current_context()
    if database_url is None and not database_named(ctx) and server_url(ctx):
        raise InvalidRequest(
            "token commands are local only: they work on the database (--db or "
            "CRONPLANE_DATABASE_URL), never through a server; --url/CRONPLANE_URL is set",
            {"field": "url"},
        )
    opened = database(ctx, writes=writes, url=database_url)
    return ScheduleService(opened, SystemClock()).tokens


_DATABASE = click.option(
    "--db",
    "--database",
    "database_url",
    default=None,
    help="Database URL (default: the root --db, env CRONPLANE_DATABASE_URL, "
    "sqlite:///cronplane.db).",
)


@click.group()
def token() -> None:
    """API tokens: create (shown once), list, revoke."""


@token.command("create")
@click.option("--tenant", default=None, help="Tenant the token is for.")
@click.option(
    "--platform", is_flag=True, help="A platform token spanning every tenant (no --tenant)."
)
@click.option("--role", required=True, type=click.Choice(ROLE_NAMES), help="Role in the tenant.")
@click.option("--name", default=None, help="A label for people (default TENANT-ROLE).")
@json_option
@_DATABASE
def create(
    tenant: str | None,
    platform: bool,
    role: str,
    name: str | None,
    as_json: bool,
    database_url: str | None,
) -> None:
    """Create a token; the last line of output is the token, shown this once
    (`--json`: the token row with the secret in its `token` field)."""
    if platform == (tenant is not None):
        raise click.UsageError("give exactly one of --tenant T or --platform")
    created = _service(database_url, writes=True).create(
        tenant=tenant, role=role, name=name, actor=_actor()
    )
    row = created.token
    if as_json:
        render.echo_json({**row.to_dict(), "token": created.secret})
        return
    click.echo(f"id:     {row.id}")
    click.echo(f"tenant: {row.tenant or '* (platform)'}")
    click.echo(f"role:   {row.role}")
    click.echo(f"name:   {row.name}")
    click.echo("Store this token now; it is not shown again:")
    click.echo(created.secret)


@token.command("ls")
@click.option("--tenant", default=None, help="Only this tenant's tokens.")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked tokens.")
@click.option("--json", "as_json", is_flag=True, help="JSON for scripts.")
@_DATABASE
def ls(tenant: str | None, include_revoked: bool, as_json: bool, database_url: str | None) -> None:
    """List tokens (never their secrets)."""
    rows = _service(database_url, writes=False).list(tenant=tenant, include_revoked=include_revoked)
    if as_json:
        click.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    header = ("ID", "TENANT", "ROLE", "NAME", "PREFIX", "CREATED", "LAST USED", "REVOKED")
    table = [header] + [
        (
            str(row.id),
            row.tenant or "*",
            row.role,
            row.name,
            row.prefix,
            _short(row.created_at.isoformat()),
            _short(row.last_used_at.isoformat() if row.last_used_at else "-"),
            _short(row.revoked_at.isoformat() if row.revoked_at else "-"),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    if not rows:
        click.echo("(no tokens)", err=True)


@token.command("revoke")
@click.argument("token_id")
@json_option
@_DATABASE
def revoke(token_id: str, as_json: bool, database_url: str | None) -> None:
    """Revoke TOKEN_ID at once (requests with it are refused from now on)."""
    row = _service(database_url, writes=True).revoke(token_id, actor=_actor())
    if as_json:
        render.echo_json(row.to_dict())
        return
    click.echo(f"revoked {row.id} ({row.name}, {row.prefix})")


def _short(iso: str) -> str:
    return iso[:19].replace("T", " ")
