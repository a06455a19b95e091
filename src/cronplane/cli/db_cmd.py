"""`cronplane db upgrade|current`: schema migrations."""

from __future__ import annotations

import click

from cronplane.cli import render
from cronplane.cli.options import json_option, scope_options, settings
from cronplane.cli.shard_setup import shard_databases


@click.group()
@scope_options
def db() -> None:
    """The database schema."""


@db.command("upgrade")
@json_option
@scope_options
@click.pass_context
def upgrade(ctx: click.Context, as_json: bool) -> None:
    """Apply every migration (safe to run from several nodes at once), to the database
    and to every shard it lists; may create a new SQLite file (said on stderr)."""
    from cronplane.store.database import open_database

    database = open_database(
        settings(ctx).database_url,
        create=True,
        announce=lambda message: click.echo(message, err=True),
    )
    ctx.call_on_close(database.dispose)
    database.upgrade()
    revision = database.current_revision()
    shards = shard_databases(ctx, database)
    upgraded = [shard.name for shard in shards.shards()[1:]]
    for name in upgraded:
        shards.database(name).upgrade()
    if as_json:
        document = {"revision": revision, "head": database.head_revision(), "shards": upgraded}
        render.echo_json(document)
    else:
        click.echo(f"database at revision {revision}")
        for name in upgraded:
            click.echo(f"shard {name} at revision {shards.database(name).current_revision()}")


@db.command("current")
@json_option
@scope_options
@click.pass_context
def current(ctx: click.Context, as_json: bool) -> None:
    """Print the schema revision and whether it is the newest (creates nothing)."""
    from cronplane.store.database import open_database

    database = open_database(settings(ctx).database_url, create=False)
    ctx.call_on_close(database.dispose)
    revision = database.current_revision()
    head = database.head_revision()
    if as_json:
        render.echo_json({"revision": revision, "head": head, "current": revision == head})
        return
    click.echo(f"{revision or '(empty)'}{'' if revision == head else f' (newest: {head})'}")
