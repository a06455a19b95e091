"""`cronplane calendar add|ls|show|rm`: the tenant's business calendars (docs/cron.md,
"Business calendars"). A schedule names them with `schedule add --exclude NAME` and
says what an excluded occurrence does with `--on-excluded skip|previous|next`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from cronplane.cli import render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.core.validation import comma_list


@click.group()
@scope_options
def calendar() -> None:
    """Business calendars: the days a schedule that excludes one does not run on."""


def _show(rows: Sequence[dict[str, Any]], as_json: bool, *, one: bool = False) -> None:
    if as_json:
        render.echo_json(rows[0] if one else list(rows))
        return
    table = Table()
    columns = ("Name", "Weekly", "Holidays", "Dates", "Revision", "Updated")
    for column in columns:
        table.add_column(column, no_wrap=column != "Dates")
    for row in rows:
        dates = row["dates"]
        shown = ", ".join(dates[:6]) + (f" (+{len(dates) - 6})" if len(dates) > 6 else "")
        table.add_row(
            escape(row["name"]),
            ", ".join(row["weekly"]) or "-",
            row["holidays"] or "-",
            shown or "-",
            str(row["revision"]),
            f"{row['updated_at'][:16]} by {escape(row['updated_by'])}",
        )
    render._console().print(table)
    if one and rows[0].get("schedules"):
        click.echo("Excluded by: " + ", ".join(rows[0]["schedules"]))


@calendar.command("add")
@click.argument("name")
@click.option("--weekly", default=None, help="Weekdays excluded, e.g. sat,sun.")
@click.option(
    "--holidays", default=None, help="Public holidays of a country[-subdivision]: GB-ENG, US."
)
@click.option("--dates", default=None, help="Dates excluded, e.g. 2027-12-27,2027-12-28.")
@click.option("--description", default=None, help="What the calendar is for.")
@click.option("--revision", type=int, default=None, help="Replace only if still at this revision.")
@json_option
@scope_options
@click.pass_context
def add(
    ctx: click.Context,
    name: str,
    weekly: str | None,
    holidays: str | None,
    dates: str | None,
    description: str | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Create calendar NAME, or replace it whole (the rows that move their excluded
    occurrences get their next run recomputed)."""
    s = settings(ctx)
    saved = client(ctx, writes=True).save_calendar(
        s.tenant,
        name,
        weekly=comma_list(weekly),
        dates=comma_list(dates),
        holidays=holidays,
        description=description,
        revision=revision,
        actor=s.actor,
    )
    _show([saved], as_json, one=True)


@calendar.command("ls")
@json_option
@scope_options
@click.pass_context
def ls(ctx: click.Context, as_json: bool) -> None:
    """The tenant's calendars."""
    _show(client(ctx).list_calendars(settings(ctx).tenant), as_json)


@calendar.command("show")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Calendar NAME and the schedules that exclude it."""
    _show([client(ctx).get_calendar(settings(ctx).tenant, name)], as_json, one=True)


@calendar.command("rm")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def rm(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove calendar NAME (refused while a schedule excludes it: exit 4)."""
    s = settings(ctx)
    removed = client(ctx, writes=True).remove_calendar(s.tenant, name, actor=s.actor)
    if as_json:
        render.echo_json(removed)
    else:
        click.echo(f"calendar {name} removed")
