"""`cronplane shard ls|add|move|drain`: tenants on shards, each shard a database.

Local only: the control database's URL (CRONPLANE_DATABASE_URL) is the root
of trust, as for `db upgrade`. A one-database install has one shard,
`default`, and never needs these (docs/operations.md, "Sharded dispatch").
"""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from cronplane.cli import render
from cronplane.cli.options import database, json_option, scope_options, settings
from cronplane.cli.shard_setup import migrate, shard_databases
from cronplane.clock import SystemClock
from cronplane.service.shards import MoveReport, ShardService
from cronplane.store.database import shown_url


def _service(ctx: click.Context) -> ShardService:
    control = database(ctx, writes=True)
    return ShardService(shard_databases(ctx, control), SystemClock())


@click.group()
@scope_options
def shard() -> None:
    """Shards: which database each tenant lives in, and moving tenants between them."""


@shard.command("ls")
@json_option
@scope_options
@click.pass_context
def ls(ctx: click.Context, as_json: bool) -> None:
    """Every shard: its database (password masked), state and tenants."""
    rows = _service(ctx).shards()
    if as_json:
        render.echo_json(
            [
                {
                    "name": row.name,
                    "url": shown_url(row.url),
                    "state": "draining" if row.draining else "active",
                    "tenants": row.tenants,
                }
                for row in rows
            ]
        )
        return
    table = Table()
    for column in ("Shard", "Database", "State", "Tenants"):
        table.add_column(column)
    for row in rows:
        shown = ", ".join(row.tenants[:5]) + (
            f" (+{len(row.tenants) - 5})" if len(row.tenants) > 5 else ""
        )
        table.add_row(
            row.name,
            escape(shown_url(row.url)),
            "draining" if row.draining else "active",
            escape(f"{len(row.tenants)}: {shown}" if row.tenants else "0"),
        )
    render.print_table(table)


@shard.command("add")
@click.argument("name")
@click.argument("url")
@json_option
@scope_options
@click.pass_context
def add(ctx: click.Context, name: str, url: str, as_json: bool) -> None:
    """Add shard NAME, its database at URL (migrated first; created when a new SQLite file)."""
    added = _service(ctx).add(name, url, migrate=migrate)
    if as_json:
        render.echo_json({"name": name, "url": shown_url(url), "added": added})
    else:
        click.echo(f"shard {name} {'added' if added else 'already registered'}: {shown_url(url)}")


def _moved(reports: list[MoveReport], as_json: bool) -> None:
    if as_json:
        render.echo_json(
            [
                {
                    "tenant": r.tenant,
                    "from": r.came_from,
                    "to": r.to,
                    "epoch": r.epoch,
                    "moved": r.moved,
                    "rows": r.rows,
                    "draining_items": r.draining_items,
                }
                for r in reports
            ]
        )
        return
    for r in reports:
        if not r.moved:
            click.echo(f"tenant {r.tenant} already lives on shard {r.to}")
            continue
        rows = sum(r.rows.values())
        click.echo(
            f"tenant {r.tenant} moved {r.came_from} -> {r.to} (epoch {r.epoch}, {rows} rows); "
            f"{r.draining_items} queued or running item(s) drain on {r.came_from}"
        )


@shard.command("move")
@click.argument("tenant")
@click.option("--to", "to", required=True, help="The shard it moves to.")
@json_option
@scope_options
@click.pass_context
def move(ctx: click.Context, tenant: str, to: str, as_json: bool) -> None:
    """Move TENANT's schedules, jobs, versions, calendars and alert rules to shard --to.

    Its dispatch stops on the old shard before it starts on the new one: no
    occurrence fires twice, and what falls due meanwhile fires on the new
    shard. Interrupted, run it again: it resumes."""
    _moved([_service(ctx).move(tenant, to, actor=settings(ctx).actor)], as_json)


@shard.command("drain")
@click.argument("name")
@click.option("--to", "to", default=None, help="Move every tenant here [default: the emptiest].")
@json_option
@scope_options
@click.pass_context
def drain(ctx: click.Context, name: str, to: str | None, as_json: bool) -> None:
    """Mark shard NAME draining (it takes no tenant) and move its tenants away."""
    _moved(_service(ctx).drain(name, to=to, actor=settings(ctx).actor), as_json)
