"""`cronplane db upgrade|current`: schema migrations."""

from __future__ import annotations

import click

from cronplane.cli.options import scope_options, settings
from cronplane.store.database import Database


@click.group()
@scope_options
def db() -> None:
    """The database schema."""


@db.command("upgrade")
@scope_options
@click.pass_context
def upgrade(ctx: click.Context) -> None:
    """Apply every migration (safe to run from several nodes at once)."""
    database = Database(settings(ctx).database_url)
    try:
        database.upgrade()
        click.echo(f"database at revision {database.current_revision()}")
    finally:
        database.dispose()


@db.command("current")
@scope_options
@click.pass_context
def current(ctx: click.Context) -> None:
    """Print the schema revision and whether it is the newest."""
    database = Database(settings(ctx).database_url)
    try:
        revision = database.current_revision()
        head = database.head_revision()
        click.echo(f"{revision or '(empty)'}{'' if revision == head else f' (newest: {head})'}")
    finally:
        database.dispose()
