"""Options every command takes, written before or after the subcommand, and the
one place a command gets its service.

`--db`, `--tenant`, `--stack` and `--env` are attached to the root, to each
group and to each leaf command. Each occurrence records its value in the
shared `ctx.meta`; click parses the root first and the leaf last, so the
value written closest to the leaf wins. Unset flags fall back to CRONPLANE_*
variables, then defaults (`cronplane.settings`).

Commands are thin: parse, call one method of `client(ctx)`, render. With
--url / CRONPLANE_URL that is the remote client, else the local service:
both are a `ControlPlane` (`cronplane.service.port`), which mypy checks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cronplane.errors import InvalidPayload, InvalidRequest
from cronplane.settings import Settings, load_settings

if TYPE_CHECKING:  # imported when a command runs: `cron explain` needs none of them
    from cronplane.client import RemoteService
    from cronplane.clock import Clock
    from cronplane.service.port import ControlPlane
    from cronplane.store.database import Database

F = TypeVar("F", bound=Callable[..., Any])
_META = "cronplane.flags"
_SERVICE = "cronplane.service"
_REASON = "cronplane.reason"


def _remember(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and param.name is not None:
        ctx.meta.setdefault(_META, {})[param.name.removeprefix("scope_")] = value


def explicit_stack(ctx: click.Context) -> bool:
    """Whether `--stack` was given on the command line (not only by CRONPLANE_STACK)."""
    return "stack" in ctx.find_root().meta.get(_META, {}) or "stack" in ctx.meta.get(_META, {})


def scope_options(command: F) -> F:
    """Attach --db/--tenant/--stack/--env (before or after the subcommand)."""
    for flag, name, variable, help_text in reversed(
        [
            (
                "--db",
                "db",
                "CRONPLANE_DATABASE_URL",
                "Database URL (default sqlite:///cronplane.db).",
            ),
            ("--tenant", "tenant", "CRONPLANE_TENANT", "Tenant (default 'default')."),
            (
                "--stack",
                "stack",
                "CRONPLANE_STACK",
                "Stack, the installed app (default 'default').",
            ),
            ("--env", "env", "CRONPLANE_ENV", "Environment (default 'default')."),
            ("--url", "url", "CRONPLANE_URL", "Work against this cronplane server's API."),
            ("--token", "token", "CRONPLANE_TOKEN", "API token for --url."),
        ]
    ):
        # Prefixed so a command's own argument (`app uninstall STACK`) never collides.
        command = click.option(
            flag,
            f"scope_{name}",
            default=None,
            expose_value=False,
            callback=_remember,
            metavar="TEXT",
            help=f"{help_text} Env {variable}.",
        )(command)
    return command


def reason_option(command: F) -> F:
    """`--reason`: why, recorded on the versions the command's change makes (issue 38)."""
    return click.option(
        "--reason",
        "change_reason",
        default=None,
        expose_value=False,
        callback=_remember_reason,
        help="Why: recorded on the schedule's version (500 characters).",
    )(command)


def _remember_reason(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta[_REASON] = value[:500]


def json_option(command: F) -> F:
    """`--json`: machine output for scripts."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")(command)


def settings(ctx: click.Context) -> Settings:
    """The settings for this invocation (flags, then CRONPLANE_* variables, then defaults)."""
    return load_settings(ctx.meta.get(_META, {}))


def server_url(ctx: click.Context) -> str | None:
    """The server this invocation talks to (--url, else CRONPLANE_URL), or None."""
    url = ctx.meta.get(_META, {}).get("url") or os.environ.get("CRONPLANE_URL")
    return str(url) if url else None


def database_named(ctx: click.Context) -> bool:
    """Whether a database was named (--db or CRONPLANE_DATABASE_URL), not defaulted."""
    return bool(ctx.meta.get(_META, {}).get("db") or os.environ.get("CRONPLANE_DATABASE_URL"))


def remote(ctx: click.Context) -> RemoteService | None:
    """The API client when --url or CRONPLANE_URL is set (with --token / CRONPLANE_TOKEN)."""
    flags = ctx.meta.get(_META, {})
    url = server_url(ctx)
    if not url:
        return None
    from cronplane.client import RemoteService

    service = ctx.meta.get(_SERVICE)
    if not isinstance(service, RemoteService):
        token = flags.get("token") or os.environ.get("CRONPLANE_TOKEN")
        service = RemoteService(url, token, via="cli", reason=ctx.meta.get(_REASON))
        ctx.call_on_close(service.close)
        ctx.meta[_SERVICE] = service
    return service


def database(ctx: click.Context, *, writes: bool, url: str | None = None) -> Database:
    """The configured database (or `url`), migrated, closed with the command.

    X503001DBDOWN when it cannot be reached. Only a command that `writes` may
    create a new SQLite file, and it says so on stderr (`store.database.open_database`).
    """
    from cronplane.store.database import open_database

    opened = open_database(
        url or settings(ctx).database_url,
        create=writes,
        announce=lambda message: click.echo(message, err=True),
    )
    ctx.call_on_close(opened.dispose)
    _OPENED.append(opened.url)
    opened.ensure_schema()
    return opened


_OPENED: list[str] = []  # what this process opened, for a connection lost later


def opened_url() -> str | None:
    """The database URL this process opened last, password masked (for messages)."""
    from cronplane.store.database import shown_url

    return shown_url(_OPENED[-1]) if _OPENED else None


def client(
    ctx: click.Context,
    clock: Callable[[Database], Clock] | None = None,
    *,
    writes: bool = False,
    tenant: str | None = None,
) -> ControlPlane:
    """The service this invocation talks to: the server's API when a URL is set, else
    the database with `clock(database)` (default: the process clock). Pass
    `writes=True` from a command that changes something: only those may create
    a new SQLite file. `tenant` (a platform command naming one): its shard's database
    instead of --tenant's."""
    server = remote(ctx)
    if server is not None:
        return server
    from cronplane.clock import SystemClock
    from cronplane.service import ScheduleService

    service = ctx.meta.get(_SERVICE) if tenant is None else None
    if not isinstance(service, ScheduleService):
        control = database(ctx, writes=writes)
        opened = tenant_database(ctx, control, writes=writes, tenant=tenant)
        service = ScheduleService(
            opened,
            SystemClock() if clock is None else clock(opened),
            min_interval=settings(ctx).min_interval,
            via="cli",
        )
        if tenant is None:
            ctx.meta[_SERVICE] = service
    reason = ctx.meta.get(_REASON)
    if reason is not None:
        from cronplane.service.base import changes_via

        # This command's changes carry its --reason (service.base.changes_via).
        ctx.with_resource(changes_via("cli", reason))
    local: ControlPlane = service
    return local


def tenant_database(
    ctx: click.Context, control: Database, *, writes: bool, tenant: str | None = None
) -> Database:
    """The database of the shard the command's tenant lives on (store.shard_map);
    `control` itself on a one-database install. A write while the tenant moves
    between shards is refused (TenantMoving): it would land on the side it leaves."""
    from cronplane.core.shards import DEFAULT_SHARD
    from cronplane.store.shard_databases import ShardDatabases

    shards = ShardDatabases(control)
    place = shards.place(tenant or settings(ctx).tenant)
    refusal = place.write_refusal() if writes else None
    if refusal is not None:
        raise refusal
    if place.shard == DEFAULT_SHARD:
        return control
    return database(ctx, writes=writes, url=shards.url_of(place.shard))


def every_shard(ctx: click.Context) -> list[ControlPlane]:
    """A platform listing's services: the server's API (it spans the shards itself), or
    one local service per shard of the database."""
    server = remote(ctx)
    if server is not None:
        return [server]
    from cronplane.clock import SystemClock
    from cronplane.service import ScheduleService
    from cronplane.store.shard_databases import ShardDatabases

    control = database(ctx, writes=False)
    shards = ShardDatabases(control)
    ctx.call_on_close(shards.dispose)
    return [
        ScheduleService(shards.database(shard.name), SystemClock(), via="cli")
        for shard in shards.shards()
    ]


def parse_json_object(text: str | None, what: str) -> dict[str, Any] | None:
    """A JSON object given inline or as `@path`; InvalidPayload when it is not one."""
    if text is None:
        return None
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as error:
            raise InvalidRequest(
                f"cannot read {what} file {text[1:]!r}: {error.strerror}"
            ) from error
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidPayload(f"{what} is not JSON: {error.msg} at position {error.pos}") from error
    if not isinstance(value, dict):
        raise InvalidPayload(f"{what} must be a JSON object, not {type(value).__name__}")
    return value
