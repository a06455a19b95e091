"""`schedule versions|diff|rollback|restore`: a schedule's versions (issue 38).

Registered on the `schedule` group by `cli/schedule_cmd.py`. Each command
makes one call (locally, or over the API with --url) and renders a table, or
JSON with --json (the documents the API answers). A refusal exits with its
code's exit status (docs/codes.md): 3 for an unknown version or nothing to
restore, 4 for a gone job or a taken name, 5 for a stale --revision.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from cronplane.cli import render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.core.codec import to_document
from cronplane.core.versions import FieldChange

REVISION = click.option(
    "--revision", type=int, default=None, help="Refuse (exit 5) unless the row is at this revision."
)
REASON = click.option(
    "--reason", default=None, help="Why: recorded on the version it makes (500 characters)."
)


def rollback_options(command: Callable[..., None]) -> Callable[..., None]:
    """A rollback's arguments, a schedule's and a job's alike: NAME, --to, --dry-run,
    --reason, --revision, --json and the scope."""
    decorators = (
        click.argument("name"),
        click.option(
            "--to", "to", type=int, required=True, help="The version to make current again."
        ),
        click.option("--dry-run", is_flag=True, help="Show the changes; write nothing."),
        REASON,
        REVISION,
        json_option,
        scope_options,
        click.pass_context,
    )
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def report_rollback(label: str, to: int, changes: tuple[FieldChange, ...], dry_run: bool) -> None:
    """What a rollback did (or, dry, would do): a line and its field changes."""
    verb = "would roll back" if dry_run else "rolled back"
    click.echo(f"{label}: {verb} to version {to}")
    changes_table(changes, "now", f"v{to}")


@click.command("versions")
@click.argument("name")
@click.option("--limit", type=int, default=100, show_default=True)
@json_option
@scope_options
@click.pass_context
def versions(ctx: click.Context, name: str, limit: int, as_json: bool) -> None:
    """The versions of NAME, newest first: who changed it, when, how and why."""
    rows = client(ctx).list_versions(settings(ctx).scope, name, limit=limit)
    if as_json:
        render.echo_json([to_document(row) for row in rows])
        return
    print_versions(rows, {"Cron": "cron"})


def print_versions(rows: Sequence[Any], shown: dict[str, str]) -> None:
    """A table of versions (a schedule's or a job's): number, when, who, how, the
    definition's fields `shown` (column title → field) and why."""
    table = Table()
    for column in ("Version", "At", "Actor", "Via", *shown, "Reason"):
        table.add_column(column, no_wrap=column in ("Version", "At", "Actor", "Via"))
    for row in rows:
        table.add_row(
            str(row.number) + (" (removed)" if getattr(row, "removed", False) else ""),
            render.when(row.at),
            escape(row.actor),
            via_text(row.via, row.digest, row.app_version),
            *(escape(str(row.definition.get(field, "-"))) for field in shown.values()),
            escape(row.reason or "-"),
        )
    render.print_table(table)


@click.command("diff")
@click.argument("name")
@click.argument("first", type=int, required=False)
@click.argument("second", type=int, required=False)
@json_option
@scope_options
@click.pass_context
def diff(
    ctx: click.Context, name: str, first: int | None, second: int | None, as_json: bool
) -> None:
    """Version FIRST of NAME against SECOND, field by field (default: the previous
    against the current), with each cron's description and its next 5 runs."""
    shown = client(ctx).diff_versions(settings(ctx).scope, name, first, second)
    if as_json:
        render.echo_json(to_document(shown))
        return
    before, after = shown.before.number, shown.after.number
    click.echo(f"{name}: version {before} -> version {after}")
    changes_table(shown.changes, f"v{before}", f"v{after}")
    for number, described, runs in zip((before, after), shown.described, shown.runs, strict=True):
        click.echo(f"v{number}: {described}")
        for run in runs:
            click.echo(f"  {render.when(run)}")


@click.command("rollback")
@rollback_options
def rollback(
    ctx: click.Context,
    name: str,
    to: int,
    dry_run: bool,
    reason: str | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Make NAME's definition version TO's again: a new version, made like an edit (on
    an app row an override, shown as drift). Refused (exit 4) when its job is gone."""
    s = settings(ctx)
    done = client(ctx, writes=not dry_run).rollback_schedule(
        s.scope, name, to=to, actor=s.actor, revision=revision, dry_run=dry_run, reason=reason
    )
    if as_json:
        render.echo_json({**to_document(done), "schedule": done.schedule.to_dict()})
        return
    report_rollback(name, to, done.changes, dry_run)


@click.command("restore")
@click.argument("name")
@REASON
@json_option
@scope_options
@click.pass_context
def restore(ctx: click.Context, name: str, reason: str | None, as_json: bool) -> None:
    """Bring back NAME, deleted within the version retention, from its last version."""
    s = settings(ctx)
    row = client(ctx, writes=True).restore_schedule(s.scope, name, actor=s.actor, reason=reason)
    render.schedule(row, as_json)


# What `cli/schedule_cmd.py` registers on the `schedule` group.
COMMANDS = (versions, diff, rollback, restore)


def via_text(via: str, digest: str | None, app_version: str | None) -> str:
    """How a version came, with a sync's digest and app version (schedule's and job's)."""
    if digest is None:
        return via
    return f"{via} {digest}" + ("" if app_version is None else f" ({app_version})")


def changes_table(changes: tuple[FieldChange, ...], before: str, after: str) -> None:
    """The fields that differ, one row each (schedule's and job's diff and rollback)."""
    if not changes:
        click.echo("no field differs")
        return
    table = Table()
    for column in ("Field", before, after):
        table.add_column(column)
    for change in changes:
        table.add_row(change.field, escape(_text(change.before)), escape(_text(change.after)))
    render.print_table(table)


def _text(value: Any) -> str:
    return "-" if value is None else value if isinstance(value, str) else json.dumps(value)
